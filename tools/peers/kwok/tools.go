//go:build tools

// Package tools pins kwok's command (cmd/kwok of sigs.k8s.io/kwok), which plays the kubelets of
// fake Nodes for the grants benchmark's kwok side. It is never compiled; it only makes
// `go mod tidy` record every module that command needs.
package tools

import _ "sigs.k8s.io/kwok/cmd/kwok"
