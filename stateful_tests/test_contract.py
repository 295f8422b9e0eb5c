"""Contract tests: the machines against an implementation named on the command line.

    pytest --pyargs deployspec.stateful_tests.test_contract --deployspec-exec "deployspec serve --model capi --variant capi-safe"
    pytest --pyargs deployspec.stateful_tests.test_contract --deployspec-python mypkg.impl:factory --deployspec-reference capi-safe

One test per check (``deployspec_check`` is parametrised by the plugin in
``deployspec/contract/plugin.py``). Without an implementation every test is
skipped at once, so this file costs nothing in the ordinary suite.
"""


def test_contract(deployspec_contract, deployspec_check):
    deployspec_contract.check(deployspec_check)
