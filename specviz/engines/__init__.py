"""Production engines beside specviz: building llama.cpp's llama-server and running it on the
bundled pair (llama_build, llama_server), and reading what a running llama-server, vLLM or SGLang
reports about its speculation over HTTP (watch and the modules it reads with)."""
