{{/*
Names and labels shared by every template. Cluster-scoped objects (ClusterRoles, admission policies)
are named after the fullname too, so two releases with different fullnames never collide.
*/}}

{{- define "simlock.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 40 | trimSuffix "-" -}}
{{- end -}}

{{/* At most 40 characters, so "<fullname>-controller-metrics" is still a valid Service name. */}}
{{- define "simlock.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 40 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 40 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 40 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "simlock.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "simlock.selectorLabels" -}}
app.kubernetes.io/name: {{ include "simlock.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "simlock.labels" -}}
helm.sh/chart: {{ include "simlock.chart" . }}
{{ include "simlock.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: simlock
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{/* Labels of one component: include with (dict "context" $ "component" "controller"). */}}
{{- define "simlock.componentLabels" -}}
{{ include "simlock.labels" .context }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{- define "simlock.componentSelectorLabels" -}}
{{ include "simlock.selectorLabels" .context }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{- define "simlock.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}

{{- define "simlock.controllerServiceAccount" -}}
{{- printf "%s-controller" (include "simlock.fullname" .) -}}
{{- end -}}

{{- define "simlock.proxyServiceAccount" -}}
{{- printf "%s-proxy" (include "simlock.fullname" .) -}}
{{- end -}}

{{/* The user name the API server gives the controller's ServiceAccount. */}}
{{- define "simlock.controllerUser" -}}
{{- printf "system:serviceaccount:%s:%s" .Release.Namespace (include "simlock.controllerServiceAccount" .) -}}
{{- end -}}

{{/* The user name the API server gives the proxy's ServiceAccount (agents allow exec from it). */}}
{{- define "simlock.proxyUser" -}}
{{- printf "system:serviceaccount:%s:%s" .Release.Namespace (include "simlock.proxyServiceAccount" .) -}}
{{- end -}}

{{/*
Agent identities, fixed by the agent contract (docs/AGENT-INSTALL.md) rather than by the release:
a client certificate with O=simlock:agents and CN=simlock:agent:<worker>, or the ServiceAccount
worker-<worker> in the release namespace.
*/}}
{{- define "simlock.agentGroup" -}}simlock:agents{{- end -}}
{{- define "simlock.agentUserPrefix" -}}simlock:agent:{{- end -}}
{{- define "simlock.agentServiceAccountPrefix" -}}
{{- printf "system:serviceaccount:%s:worker-" .Release.Namespace -}}
{{- end -}}

{{/* Subjects bound to the agent roles: the certificate group and each worker's ServiceAccount. */}}
{{- define "simlock.agentSubjects" -}}
{{- if .Values.agents.certificates.enabled }}
- apiGroup: rbac.authorization.k8s.io
  kind: Group
  name: {{ include "simlock.agentGroup" . }}
{{- end }}
{{- range .Values.agents.serviceAccounts }}
- kind: ServiceAccount
  name: worker-{{ . }}
  namespace: {{ $.Release.Namespace }}
{{- end }}
{{- end -}}

{{/* Pod placement: "prefer replicas on different nodes" unless affinity is given. */}}
{{- define "simlock.podPlacement" -}}
{{- $values := .values -}}
{{- with $values.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with $values.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
affinity:
{{- if $values.affinity }}
  {{- toYaml $values.affinity | nindent 2 }}
{{- else }}
  podAntiAffinity:
    preferredDuringSchedulingIgnoredDuringExecution:
      - weight: 100
        podAffinityTerm:
          topologyKey: kubernetes.io/hostname
          labelSelector:
            matchLabels:
              {{- include "simlock.componentSelectorLabels" (dict "context" .context "component" .component) | nindent 14 }}
{{- end }}
{{- with $values.priorityClassName }}
priorityClassName: {{ . }}
{{- end }}
{{- end -}}

{{/* The controller's rules on namespaced objects: cluster-wide, or in controller.watchNamespace. */}}
{{- define "simlock.controllerNamespacedRules" }}
  - apiGroups: [simlock.dev]
    resources: [leaserequests]
    verbs: [get, list, watch, patch, update]
  - apiGroups: [simlock.dev]
    resources: [leaserequests/status]
    verbs: [patch, update]
  - apiGroups: ['']
    resources: [events]
    verbs: [create, patch]
  # Holder sessions (label simlock.dev/holder-session): a request whose holder stops renewing is
  # released, HolderGone (ADR 0008).
  - apiGroups: [coordination.k8s.io]
    resources: [leases]
    verbs: [get, list, watch]
{{- end }}

{{/* What a user of simlock may do in a namespace. */}}
{{- define "simlock.userRules" }}
  # patch: kubectl simlock extend (spec.durationSeconds may only grow; CEL).
  - apiGroups: [simlock.dev]
    resources: [leaserequests]
    verbs: [create, delete, get, list, watch, patch]
  - apiGroups: [simlock.dev]
    resources: [leases]
    verbs: [get, list, watch]
  # kubectl simlock lease --hold renews a holder session, a coordination.k8s.io Lease.
  - apiGroups: [coordination.k8s.io]
    resources: [leases]
    verbs: [create, get, update, delete]
  # A request made from a pod (or with --owner pod/NAME) is owned by it: its uid is read.
  - apiGroups: ['']
    resources: [pods]
    verbs: [get]
  # Checked by the exec proxy with a SubjectAccessReview; no such subresource is served.
  - apiGroups: [simlock.dev]
    resources: [leases/exec]
    verbs: [create]
{{- end }}
