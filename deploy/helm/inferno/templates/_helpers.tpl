{{/* The chart's name, or nameOverride. */}}
{{- define "inferno.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* The release's resource name: fullnameOverride, else release-chart (the release name alone when it holds the chart's). */}}
{{- define "inferno.fullname" -}}
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

{{/* The endpoint picker's name. */}}
{{- define "inferno.eppName" -}}
{{- printf "%s-epp" (include "inferno.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "inferno.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Labels of the model servers' resources. */}}
{{- define "inferno.labels" -}}
helm.sh/chart: {{ include "inferno.chart" . }}
{{ include "inferno.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{/* Labels of the endpoint picker's resources. */}}
{{- define "inferno.eppLabels" -}}
helm.sh/chart: {{ include "inferno.chart" . }}
{{ include "inferno.eppSelectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{/* Labels that select the model server pods (the Service's and the InferencePool's selector). */}}
{{- define "inferno.selectorLabels" -}}
app.kubernetes.io/name: {{ include "inferno.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: model-server
{{- end }}

{{/* Labels of the endpoint picker's pods. */}}
{{- define "inferno.eppSelectorLabels" -}}
app.kubernetes.io/name: {{ include "inferno.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: endpoint-picker
{{- end }}

{{- define "inferno.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "inferno.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* The Secret holding the API key, "" when none is required. */}}
{{- define "inferno.apiKeySecret" -}}
{{- if .Values.apiKey.existingSecret }}
{{- .Values.apiKey.existingSecret }}
{{- else if .Values.apiKey.value }}
{{- printf "%s-api-key" (include "inferno.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}

{{/* The cache claim's name. */}}
{{- define "inferno.cacheClaim" -}}
{{- default (printf "%s-cache" (include "inferno.fullname" .)) .Values.cache.persistence.existingClaim }}
{{- end }}

{{/* The image reference. */}}
{{- define "inferno.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}

{{/* Environment shared by the server and the pull init container. */}}
{{- define "inferno.hubEnv" -}}
- name: HF_HOME
  value: /models
{{- if .Values.model.offline }}
- name: HF_HUB_OFFLINE
  value: "1"
{{- end }}
{{- if .Values.model.hfToken.secretName }}
- name: HF_TOKEN
  valueFrom:
    secretKeyRef:
      name: {{ .Values.model.hfToken.secretName }}
      key: {{ .Values.model.hfToken.secretKey }}
{{- end }}
{{- end }}
