"""Front ends of Tonk RL: where people (and other programs) meet the agents.

==================  ===========================================================
module              what it is
==================  ===========================================================
``table``           a table of hands: seats, agents, dealer rotation, scores
``terminal``        ``tonk play``: a person plays in the terminal
``server``          ``tonk serve``: the HTTP/JSON API (FastAPI) and the page
``static/``         the browser game, one HTML page served at ``/``
``onnx_export``     ``tonk export --format onnx``: a policy network as ONNX
``openspiel_game``  OpenSpiel interop: the ``python_tonk`` game, agents as bots
==================  ===========================================================

This package is the top layer: it may import ``tonk_env``, ``agents``,
``eval`` and ``train``; nothing below imports it (the ``onnx:DIR`` agent that
plays an export is :mod:`agents.onnx_agent`). FastAPI, uvicorn, onnx,
onnxruntime and open_spiel are optional: only the modules that need them
import them. See ``docs/FRONTENDS.md``.
"""
