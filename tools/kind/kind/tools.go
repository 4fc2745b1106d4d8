//go:build tools

// Package tools pins the kind command that the kind tier of the tests runs. It is never compiled;
// it only makes `go mod tidy` record every module kind needs.
package tools

import (
	_ "sigs.k8s.io/kind"
)
