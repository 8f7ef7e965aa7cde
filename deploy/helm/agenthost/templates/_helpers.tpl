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
{{- if not (semverCompare ">=3.8.0-0" .Capabilities.HelmVersion.Version) }}
{{- fail (printf "this chart needs Helm 3.8 or newer, not %s" .Capabilities.HelmVersion.Version) }}
{{- end }}
{{- if and .Values.a2a.grpc.enabled (not (has "a2a" .Values.settings.adapters)) }}
{{- fail "a2a.grpc.enabled needs \"a2a\" in settings.adapters" }}
{{- end }}
{{- if or .Values.autoscaling.enabled (gt (int .Values.replicaCount) 1) }}
{{- if eq .Values.sessionStore.backend "memory" }}
{{- fail "more than one replica (replicaCount > 1 or autoscaling) needs sessionStore.backend: redis: with memory each pod keeps its own sessions, and a conversation continued on another pod is not found" }}
{{- end }}
{{- if and (has "a2a" .Values.settings.adapters) (eq .Values.a2aTaskStore.backend "memory") }}
{{- fail "more than one replica (replicaCount > 1 or autoscaling) with the a2a adapter needs a2aTaskStore.backend: postgresql: with memory each pod keeps its own A2A tasks" }}
{{- end }}
{{- end }}
{{- if ne (toString .Values.workers) "1" }}
{{- if eq .Values.sessionStore.backend "memory" }}
{{- fail "workers other than 1 needs sessionStore.backend: redis: each worker process keeps its own memory, as each pod does" }}
{{- end }}
{{- if and (has "a2a" .Values.settings.adapters) (eq .Values.a2aTaskStore.backend "memory") }}
{{- fail "workers other than 1 with the a2a adapter needs a2aTaskStore.backend: postgresql: each worker process keeps its own memory, as each pod does" }}
{{- end }}
{{- end }}
{{- if and (eq .Values.service.type "LoadBalancer") (not .Values.service.hosts) }}
{{- fail "service.type LoadBalancer needs service.hosts: the IP or DNS name clients use to reach it (`kubectl get svc` shows the address after the first install; then `helm upgrade --set 'service.hosts={ADDRESS}'`). Without it every request through the load balancer gets 421 host_not_allowed. `service.hosts={*}` accepts any Host header and turns the DNS-rebinding protection off" }}
{{- end }}
{{- if and .Values.autoscaling.enabled (kindIs "invalid" .Values.autoscaling.targetCPUUtilizationPercentage) (not .Values.autoscaling.runsInFlight.enabled) }}
{{- fail "autoscaling needs a metric: targetCPUUtilizationPercentage or runsInFlight.enabled" }}
{{- end }}
{{- if gt (len (compact (list (ternary "files" "" (not (empty .Values.agentCode.files))) .Values.agentCode.existingConfigMap (ternary "volume" "" (not (empty .Values.agentCode.volume)))))) 1 }}
{{- fail "agentCode: give one of files, existingConfigMap or volume" }}
{{- end }}
{{- if and (eq .Values.sessionStore.backend "redis") (not (or .Values.sessionStore.redis.existingSecret .Values.sessionStore.redis.url)) }}
{{- fail "sessionStore.backend: redis needs sessionStore.redis.existingSecret or sessionStore.redis.url" }}
{{- end }}
{{- if and (eq .Values.a2aTaskStore.backend "postgresql") (not (or .Values.a2aTaskStore.postgresql.existingSecret .Values.a2aTaskStore.postgresql.url)) }}
{{- fail "a2aTaskStore.backend: postgresql needs a2aTaskStore.postgresql.existingSecret or a2aTaskStore.postgresql.url" }}
{{- end }}
{{- end }}

{{/* The Secret holding a store's URL, and its key: ``(list name key)``. */}}
{{- define "agenthost.storeSecret" -}}
{{- $store := index . 0 }}{{- $key := index . 1 }}{{- $root := index . 2 }}
{{- if $store.existingSecret }}
{{- list $store.existingSecret $store.secretKey | toJson }}
{{- else }}
{{- list (printf "%s-stores" (include "agenthost.fullname" $root)) $key | toJson }}
{{- end }}
{{- end }}

{{/* A setting as an environment value: lists comma-joined, whole numbers
without an exponent (YAML numbers arrive as floats). Nested ifs, not `and`:
before Helm 3.9 (Go 1.18) `and` evaluated every argument, so `floor` of a
string or a bool failed the render. */}}
{{- define "agenthost.envValue" -}}
{{- if kindIs "slice" . }}
{{- join "," . }}
{{- else if kindIs "float64" . }}
{{- if eq . (floor .) }}
{{- int64 . }}
{{- else }}
{{- toString . }}
{{- end }}
{{- else }}
{{- toString . }}
{{- end }}
{{- end }}

{{/* Host names /mcp accepts (DNS-rebinding protection): the Service's
in-cluster names, every ingress host, and settings.mcp_allowed_hosts. */}}
{{- define "agenthost.mcpAllowedHosts" -}}
{{- $name := include "agenthost.fullname" . }}
{{- $ns := .Release.Namespace }}
{{- $hosts := list $name (printf "%s.%s" $name $ns) (printf "%s.%s.svc" $name $ns) (printf "%s.%s.svc.cluster.local" $name $ns) }}
{{- if .Values.ingress.enabled }}
{{- range .Values.ingress.hosts }}
{{- $hosts = append $hosts .host }}
{{- end }}
{{- end }}
{{- range (.Values.service.hosts | default list) }}
{{- $hosts = append $hosts . }}
{{- end }}
{{- range (.Values.settings.mcp_allowed_hosts | default list) }}
{{- $hosts = append $hosts . }}
{{- end }}
{{- $hosts | uniq | join "," }}
{{- end }}

{{/* Host names every surface accepts (AGENTHOST_ALLOWED_HOSTS, DNS-rebinding
protection): the Service's in-cluster names, every ingress host, the pod's own
IP (scrapers and port-forwards reach it by address; Kubernetes expands
$(AGENTHOST_POD_IP) from the env entry before it) and settings.allowed_hosts. */}}
{{- define "agenthost.allowedHosts" -}}
{{- $name := include "agenthost.fullname" . }}
{{- $ns := .Release.Namespace }}
{{- $hosts := list $name (printf "%s.%s" $name $ns) (printf "%s.%s.svc" $name $ns) (printf "%s.%s.svc.cluster.local" $name $ns) }}
{{- if .Values.ingress.enabled }}
{{- range .Values.ingress.hosts }}
{{- $hosts = append $hosts .host }}
{{- end }}
{{- end }}
{{- range (.Values.service.hosts | default list) }}
{{- $hosts = append $hosts . }}
{{- end }}
{{- $hosts = append $hosts "$(AGENTHOST_POD_IP)" }}
{{- range (.Values.settings.allowed_hosts | default list) }}
{{- $hosts = append $hosts . }}
{{- end }}
{{- $hosts | uniq | join "," }}
{{- end }}

{{/* The URL A2A agent cards name: settings.a2a_public_url, else the first
ingress host (https when a TLS entry lists it); empty = from each request. */}}
{{- define "agenthost.a2aPublicURL" -}}
{{- if .Values.settings.a2a_public_url }}
{{- .Values.settings.a2a_public_url }}
{{- else if .Values.ingress.enabled }}
{{- $host := (index .Values.ingress.hosts 0).host }}
{{- $tls := false }}
{{- range .Values.ingress.tls }}
{{- if has $host (.hosts | default list) }}
{{- $tls = true }}
{{- end }}
{{- end }}
{{- printf "%s://%s" (ternary "https" "http" $tls) $host }}
{{- end }}
{{- end }}

{{/* Whether a PodDisruptionBudget is rendered: podDisruptionBudget.enabled,
or when it is null (the default), whenever more than one pod runs. */}}
{{- define "agenthost.pdbEnabled" -}}
{{- $on := .Values.podDisruptionBudget.enabled }}
{{- if kindIs "invalid" $on }}
{{- if or .Values.autoscaling.enabled (gt (int .Values.replicaCount) 1) }}true{{ end }}
{{- else if $on }}true
{{- end }}
{{- end }}

{{/* The Ingress's annotations as YAML: the ingress-nginx ones the app needs
(ingress.nginxAnnotations), then ingress.annotations over them. The body
limit is the app's (settings.max_body_bytes, default 4 MiB) plus 1 MiB, so an
oversized body reaches the app and gets its protocol's error. */}}
{{- define "agenthost.ingressAnnotations" -}}
{{- $annotations := dict }}
{{- if .Values.ingress.nginxAnnotations }}
{{- $body := .Values.settings.max_body_bytes | default 4194304 | int64 }}
{{- $_ := set $annotations "nginx.ingress.kubernetes.io/proxy-buffering" "off" }}
{{- $_ := set $annotations "nginx.ingress.kubernetes.io/proxy-read-timeout" "3600" }}
{{- $_ := set $annotations "nginx.ingress.kubernetes.io/proxy-send-timeout" "3600" }}
{{- $_ := set $annotations "nginx.ingress.kubernetes.io/proxy-body-size" (printf "%d" (add $body 1048576)) }}
{{- end }}
{{- toYaml (merge (deepCopy (.Values.ingress.annotations | default dict)) $annotations) }}
{{- end }}

{{/* The volume source of agentCode (a ConfigMap of the chart's, yours, or
any volume source) as YAML; empty when there is none. */}}
{{- define "agenthost.agentCodeVolume" -}}
{{- if .Values.agentCode.files }}
configMap:
  name: {{ include "agenthost.fullname" . }}-code
{{- else if .Values.agentCode.existingConfigMap }}
configMap:
  name: {{ .Values.agentCode.existingConfigMap }}
{{- else if .Values.agentCode.volume }}
{{- toYaml .Values.agentCode.volume }}
{{- end }}
{{- end }}

{{/* Whether the migration Job (a pre-install and pre-upgrade hook) is
rendered: migrations.enabled with the A2A tasks in PostgreSQL. */}}
{{- define "agenthost.migrationsEnabled" -}}
{{- if and .Values.migrations.enabled (eq .Values.a2aTaskStore.backend "postgresql") }}true{{ end }}
{{- end }}
