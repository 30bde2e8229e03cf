"""Production engines beside specviz: building llama.cpp's llama-server, running it on the
bundled pair, and reading what a running server reports about its speculation."""
