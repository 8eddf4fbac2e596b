"""Workflows: jobs that compose training and evaluation, callable from Python.

``train`` and ``eval`` do not import each other; a workflow sits above both and
passes the evaluation to training as a function. Each workflow takes typed
arguments and returns a result object; the command modules of ``tonk_cli``
(``exploit_cmd``, ``zoo_cmd``, ``train_cmd``) only turn flags into these calls
and print the result. This package imports no ``argparse`` and no command
module (``tests/test_architecture.py`` checks both).

- :mod:`~tonk_cli.workflows.exploit`: a best response to a frozen agent and its margin.
- :mod:`~tonk_cli.workflows.zoo`: a training run added to the zoo, a best response on a card.
- :mod:`~tonk_cli.workflows.pipeline`: train a config, evaluate it against the baselines (``make run``).
- :mod:`~tonk_cli.workflows.common`: the one-seat evaluation, a score row, the source commit.

Example::

    from tonk_cli.workflows.pipeline import run_pipeline

    report = run_pipeline("quick", ["total_steps=4096"], hands=200, progress=False)
    print(report.run_dir, [(r.opponent, r.mean_stakes) for r in report.results])
"""
