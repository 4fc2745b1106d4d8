//go:build tools

// Package tools pins the Kubernetes commands simlock's tests run (the node commands kubelet, kubeadm
// and kube-proxy go into the kind node image of tools/kind). It is never compiled; it only
// makes `go mod tidy` record every module those commands need.
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-proxy"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubeadm"
	_ "k8s.io/kubernetes/cmd/kubectl"
	_ "k8s.io/kubernetes/cmd/kubelet"
)
