module simlock.dev/tools/kind/pause

go 1.24.0
