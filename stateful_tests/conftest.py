from deployspec.profiles import register

register()
