"""The committed findings (trace files, one folder per model), installed as package data:
``deployspec contract`` replays them on an implementation before its search
(``deployspec/contract/known.py``). No code lives here."""
