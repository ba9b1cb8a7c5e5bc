{{/* Names and labels, the usual way. */}}
{{- define "torii.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "torii.fullname" -}}
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

{{- define "torii.selectorLabels" -}}
app.kubernetes.io/name: {{ include "torii.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "torii.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "torii.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/component: gateway
{{- end }}

{{- define "torii.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "torii.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* The Ingress host: ingress.host, else publicURL's host without a port. */}}
{{- define "torii.host" -}}
{{- if .Values.ingress.host }}
{{- .Values.ingress.host }}
{{- else }}
{{- $u := urlParse .Values.publicURL }}
{{- (split ":" $u.host)._0 }}
{{- end }}
{{- end }}

{{/* What the replicas speak on their port: https, or http behind a trusted Ingress. */}}
{{- define "torii.scheme" -}}
{{- if .Values.tls.ingress }}http{{ else }}https{{ end }}
{{- end }}

{{- define "torii.adminSecretName" -}}
{{- default (printf "%s-admin" (include "torii.fullname" .)) .Values.adminToken.existingSecret }}
{{- end }}

{{/* The quick start's services, named as the two charts name them. */}}
{{- define "torii.postgresqlHost" -}}
{{- if .Values.postgresql.fullnameOverride }}
{{- .Values.postgresql.fullnameOverride }}
{{- else if contains "postgresql" .Release.Name }}
{{- .Release.Name }}
{{- else }}
{{- printf "%s-postgresql" .Release.Name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}

{{- define "torii.natsHost" -}}
{{- if .Values.nats.fullnameOverride }}
{{- .Values.nats.fullnameOverride }}
{{- else if contains "nats" .Release.Name }}
{{- .Release.Name }}
{{- else }}
{{- printf "%s-nats" .Release.Name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}

{{/* Files the Secrets are mounted as; config.json names the same paths. */}}
{{- define "torii.tlsDir" -}}/etc/torii/tls{{- end }}
{{- define "torii.identityFile" -}}/etc/torii/identity/key{{- end }}
{{- define "torii.adminTokenFile" -}}/etc/torii/admin/token{{- end }}

{{/*
config.json. store and bus are not in it: they come from TORII_TEAM_STORE and TORII_TEAM_BUS
(Secrets), which the replica prefers over the file.
*/}}
{{- define "torii.configJSON" -}}
{{- $tls := dict "ingress" true }}
{{- if not .Values.tls.ingress }}
{{- $tls = dict "cert" (printf "%s/tls.crt" (include "torii.tlsDir" .)) "key" (printf "%s/tls.key" (include "torii.tlsDir" .)) }}
{{- end }}
{{- $team := dict
      "publicURL" .Values.publicURL
      "tls" $tls
      "identityFile" (include "torii.identityFile" .)
      "adminTokenFile" (include "torii.adminTokenFile" .) }}
{{- $ours := dict "listen" (printf "0.0.0.0:%d" (int .Values.port)) "team" $team }}
{{- mustMergeOverwrite (deepCopy .Values.config) $ours | toPrettyJson }}
{{- end }}

{{/*
Refusals at install time, each naming the fix, so a wrong install fails before any pod starts.
SECURITY I-100: TLS is the only transport; plaintext only behind the Ingress, explicitly.
*/}}
{{- define "torii.validate" -}}
{{- if not (hasPrefix "https://" .Values.publicURL) }}
{{- fail (printf "publicURL %q must start with https://: the gateway is TLS only and browsers refuse ws:// off loopback (set publicURL=https://your.host)" .Values.publicURL) }}
{{- end }}
{{- if and (not .Values.tls.ingress) (not .Values.tls.secretName) }}
{{- fail "no TLS: set tls.secretName to a kubernetes.io/tls Secret the replicas serve, or tls.ingress=true to listen in plaintext behind the TLS-terminating Ingress" }}
{{- end }}
{{- if and .Values.tls.ingress (not .Values.ingress.enabled) }}
{{- fail "tls.ingress=true trusts the Ingress to terminate TLS, but ingress.enabled is false: enable the Ingress, or give tls.secretName and set tls.ingress=false" }}
{{- end }}
{{- if not .Values.identity.existingSecret }}
{{- fail "identity.existingSecret is empty: every replica needs the same P-256 identity key from a Secret (docs/team.md: openssl genpkey … ; kubectl create secret generic torii-identity --from-file=key=identity.key)" }}
{{- end }}
{{- if not (or .Values.store.url .Values.postgresql.enabled .Values.store.existingSecret) }}
{{- fail "no store: set store.existingSecret to a Secret holding the postgres:// URL (or store.url, or postgresql.enabled=true for the quick start)" }}
{{- end }}
{{- if not (or .Values.bus.url .Values.nats.enabled .Values.bus.existingSecret) }}
{{- fail "no bus: set bus.existingSecret to a Secret holding the nats:// URL (or bus.url, or nats.enabled=true for the quick start)" }}
{{- end }}
{{- if and (hasPrefix "sqlite:" .Values.store.url) (gt (int .Values.replicaCount) 1) }}
{{- fail (printf "store.url is SQLite, which serves one replica only, but replicaCount is %d: use PostgreSQL, or replicaCount=1" (int .Values.replicaCount)) }}
{{- end }}
{{- end }}
