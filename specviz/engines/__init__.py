"""Serving engines reached over HTTP: a running llama-server, vLLM or SGLang, read as records."""
