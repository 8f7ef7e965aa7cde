{{/* Names and labels shared by every object. */}}
{{- define "agenthost.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "agenthost.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "agenthost.selectorLabels" -}}
app.kubernetes.io/name: {{ include "agenthost.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "agenthost.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "agenthost.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{- define "agenthost.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "agenthost.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* The ConfigMap holding the agents file. */}}
{{- define "agenthost.configMapName" -}}
{{- default (include "agenthost.fullname" .) .Values.config.existingConfigMap }}
{{- end }}

{{/* The Secret holding the API keys file; empty when auth is off. */}}
{{- define "agenthost.apiKeysSecretName" -}}
{{- if .Values.apiKeys.existingSecret }}
{{- .Values.apiKeys.existingSecret }}
{{- else if .Values.apiKeys.keys }}
{{- printf "%s-api-keys" (include "agenthost.fullname" .) }}
{{- end }}
{{- end }}

{{/* Seconds from SIGTERM to the end of the graceful shutdown. */}}
{{- define "agenthost.shutdownSeconds" -}}
{{- add (.Values.settings.drain_seconds | default 0 | ceil) (.Values.settings.graceful_shutdown_seconds | default 30 | ceil) }}
{{- end }}

{{- define "agenthost.terminationGracePeriodSeconds" -}}
{{- $needed := include "agenthost.shutdownSeconds" . | int }}
{{- if kindIs "invalid" .Values.terminationGracePeriodSeconds }}
{{- add $needed 10 }}
{{- else if le (int .Values.terminationGracePeriodSeconds) $needed }}
{{- fail (printf "terminationGracePeriodSeconds (%v) must exceed settings.drain_seconds + settings.graceful_shutdown_seconds (%d), or the drain is cut short" .Values.terminationGracePeriodSeconds $needed) }}
{{- else }}
{{- .Values.terminationGracePeriodSeconds }}
{{- end }}
{{- end }}

{{/* Refuse values that cannot work, at render time rather than in the pod. */}}
{{- define "agenthost.validate" -}}
{{- if and .Values.a2a.grpc.enabled (not (has "a2a" .Values.settings.adapters)) }}
{{- fail "a2a.grpc.enabled needs \"a2a\" in settings.adapters" }}
{{- end }}
{{- if ne .Values.sessionStore.backend "memory" }}
{{- fail "sessionStore: only \"memory\" is available until the scale-out work lands" }}
{{- end }}
{{- if ne .Values.a2aTaskStore.backend "memory" }}
{{- fail "a2aTaskStore: only \"memory\" is available until the scale-out work lands" }}
{{- end }}
{{- end }}

{{/* A setting as an environment value: lists comma-joined, whole numbers
without an exponent (YAML numbers arrive as floats). */}}
{{- define "agenthost.envValue" -}}
{{- if kindIs "slice" . }}
{{- join "," . }}
{{- else if and (kindIs "float64" .) (eq . (floor .)) }}
{{- int64 . }}
{{- else }}
{{- toString . }}
{{- end }}
{{- end }}
