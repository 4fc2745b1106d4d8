//go:build tools

// Package tools pins actionlint, which checks .github/workflows/ (lint-workflows.sh).
// It is never compiled; it only makes `go mod tidy` record every module actionlint needs.
package tools

import (
	_ "github.com/rhysd/actionlint/cmd/actionlint"
)
