//go:build tools

// Package tools pins Kueue's minimalkueue (its core controllers and scheduler without webhooks,
// test/performance/scheduler/minimalkueue of sigs.k8s.io/kueue) for the grants benchmark's kueue
// side. It is never compiled; it only makes `go mod tidy` record every module it needs.
package tools

import _ "sigs.k8s.io/kueue/test/performance/scheduler/minimalkueue"
