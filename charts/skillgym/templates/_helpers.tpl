{{/* Chart name, truncated to the DNS label limit. */}}
{{- define "skillgym.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Fully qualified app name. */}}
{{- define "skillgym.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "skillgym.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Common labels; pass a dict with "root" (the top context) and "component". */}}
{{- define "skillgym.labels" -}}
helm.sh/chart: {{ include "skillgym.chart" .root }}
{{ include "skillgym.selectorLabels" . }}
app.kubernetes.io/version: {{ .root.Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
app.kubernetes.io/part-of: skillgym
{{- end -}}

{{- define "skillgym.selectorLabels" -}}
app.kubernetes.io/name: {{ include "skillgym.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{- define "skillgym.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}

{{- define "skillgym.operatorImage" -}}
{{- $repo := default .Values.image.repository .Values.operator.image.repository -}}
{{- printf "%s:%s" $repo (default (default .Chart.AppVersion .Values.image.tag) .Values.operator.image.tag) -}}
{{- end -}}

{{- define "skillgym.configName" -}}
{{- printf "%s-config" (include "skillgym.fullname" .) -}}
{{- end -}}

{{- define "skillgym.secretName" -}}
{{- default (printf "%s-secrets" (include "skillgym.fullname" .)) .Values.secrets.existingSecret -}}
{{- end -}}

{{- define "skillgym.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "skillgym.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "skillgym.operatorName" -}}
{{- printf "%s-operator" (include "skillgym.fullname" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* envFrom shared by every SkillGym container. */}}
{{- define "skillgym.envFrom" -}}
- configMapRef:
    name: {{ include "skillgym.configName" . }}
- secretRef:
    name: {{ include "skillgym.secretName" . }}
{{- end -}}

{{/* The topic list including dead-letter topics. */}}
{{- define "skillgym.allTopics" -}}
{{- range .Values.topics.names }}
- {{ . }}
- {{ . }}.dlq
{{- end }}
{{- end -}}

{{/* Where the operator pushes task images and the nodes pull them from. */}}
{{- define "skillgym.buildRegistry" -}}
{{- if .Values.imageBuilds.registry -}}
{{- .Values.imageBuilds.registry -}}
{{- else -}}
{{- printf "%s-registry.%s.svc.cluster.local:5000" (include "skillgym.fullname" .) .Release.Namespace -}}
{{- end -}}
{{- end -}}
