//go:build tools

// Package tools pins krew (built by tools/release/go-tool.sh krew), whose `kubectl krew install
// --manifest --archive` e2e/release-binary.test.ts runs on the built archive. It is never compiled;
// it only makes `go mod tidy` record every module krew needs.
package tools

import (
	_ "sigs.k8s.io/krew/cmd/krew"
)
