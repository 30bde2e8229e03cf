"""Production configs: the current pair, drafter and settings as copy-ready snippets for serving
engines (vLLM, llama.cpp's llama-server, transformers, SGLang).

``engines`` holds the one table of every flag a snippet writes, each with the engine version it
was checked against and the page that documents it; ``snippets`` builds the snippets from a
preset, a drafter spec and settings, with a note beside each for what has no counterpart.
"""
