// Package helmcheck runs `helm lint` and `helm template` on deploy/helm/torii through Helm's Go
// module, so `make test` checks the chart with no helm binary and no network. It is a module of
// its own: the torii binary does not depend on Helm.
//
// The quick start's PostgreSQL and NATS charts are not vendored: the lint tolerates exactly the
// warning that they are not in charts/, and rendering covers the chart's own templates (with the
// two charts enabled or not), which is what this chart owns.
package helmcheck

import (
	"bytes"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"helm.sh/helm/v4/pkg/action"
	"helm.sh/helm/v4/pkg/chart/common"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/chart/v2/lint/support"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	release "helm.sh/helm/v4/pkg/release/v1"
	releaseutil "helm.sh/helm/v4/pkg/release/v1/util"
	"helm.sh/helm/v4/pkg/strvals"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"sigs.k8s.io/yaml"
)

const (
	chartDir       = "../helm/torii"
	quickStartFile = "../helm/values-quickstart.yaml"
	releaseName    = "torii"
	namespace      = "team"
)

// missingDeps is the one lint warning tolerated: the quick start's charts are fetched by
// `helm dependency build`, never committed.
const missingDeps = "chart directory is missing these dependencies: postgresql,nats"

// values builds what `-f FILE --set a=b,…` would: the file (if any), then each --set.
func values(t *testing.T, file string, sets ...string) map[string]any {
	t.Helper()
	vals := map[string]any{}
	if file != "" {
		v, err := common.ReadValuesFile(file)
		if err != nil {
			t.Fatalf("read %s: %v", file, err)
		}
		vals = v.AsMap()
	}
	for _, s := range sets {
		if err := strvals.ParseInto(s, vals); err != nil {
			t.Fatalf("--set %s: %v", s, err)
		}
	}
	return vals
}

// lint is `helm lint deploy/helm/torii` with these values: it fails the test on any error, and
// on any warning but the missing dependency charts.
func lint(t *testing.T, vals map[string]any) {
	t.Helper()
	l := action.NewLint()
	l.Namespace = namespace
	res := l.Run([]string{chartDir}, vals)
	if res.TotalChartsLinted != 1 {
		t.Fatalf("lint: %d charts linted, errors %v", res.TotalChartsLinted, res.Errors)
	}
	for _, m := range res.Messages {
		if m.Severity < support.WarningSev {
			continue
		}
		if m.Severity == support.WarningSev && m.Err != nil && m.Err.Error() == missingDeps {
			continue
		}
		t.Errorf("lint: %s", m)
	}
}

// render is `helm template torii deploy/helm/torii -n team` with these values: the manifests by
// kind/name, or Helm's error (a template's `fail` shows up here).
func render(t *testing.T, vals map[string]any) (*manifests, error) {
	t.Helper()
	ch, err := loader.Load(chartDir)
	if err != nil {
		t.Fatalf("load chart: %v", err)
	}
	cfg := action.NewConfiguration()
	cfg.SetLogger(slog.DiscardHandler)
	inst := action.NewInstall(cfg)
	inst.DryRunStrategy = action.DryRunClient
	inst.ReleaseName = releaseName
	inst.Namespace = namespace
	inst.Replace = true
	rel, err := inst.Run(ch, vals)
	if err != nil {
		return nil, err
	}
	r, ok := rel.(*release.Release)
	if !ok {
		t.Fatalf("release is %T", rel)
	}
	return parse(t, r.Manifest)
}

// mustRender renders and fails the test on an error.
func mustRender(t *testing.T, vals map[string]any) *manifests {
	t.Helper()
	m, err := render(t, vals)
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	return m
}

// manifests holds the rendered objects, decoded strictly into the Kubernetes API types: a field
// the API does not have is a test failure, as the API server would refuse it.
type manifests struct {
	byKey map[string][]byte // "Kind/name" → YAML
}

func parse(t *testing.T, manifest string) (*manifests, error) {
	t.Helper()
	m := &manifests{byKey: map[string][]byte{}}
	for _, doc := range releaseutil.SplitManifests(manifest) {
		var head struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Name      string `json:"name"`
				Namespace string `json:"namespace"`
			} `json:"metadata"`
		}
		if err := yaml.Unmarshal([]byte(doc), &head); err != nil {
			return nil, fmt.Errorf("rendered YAML: %w\n%s", err, doc)
		}
		if head.Kind == "" {
			continue
		}
		key := head.Kind + "/" + head.Metadata.Name
		if _, dup := m.byKey[key]; dup {
			return nil, fmt.Errorf("%s rendered twice", key)
		}
		m.byKey[key] = []byte(doc)
	}
	return m, nil
}

func (m *manifests) keys() []string {
	var ks []string
	for k := range m.byKey {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

func (m *manifests) has(kind, name string) bool {
	_, ok := m.byKey[kind+"/"+name]
	return ok
}

func get[T any](t *testing.T, m *manifests, kind, name string) *T {
	t.Helper()
	doc, ok := m.byKey[kind+"/"+name]
	if !ok {
		t.Fatalf("no %s/%s rendered; have %v", kind, name, m.keys())
	}
	var obj T
	if err := yaml.UnmarshalStrict(doc, &obj); err != nil {
		t.Fatalf("%s/%s does not decode as the API type: %v\n%s", kind, name, err, doc)
	}
	return &obj
}

func (m *manifests) deployment(t *testing.T) *appsv1.Deployment {
	return get[appsv1.Deployment](t, m, "Deployment", releaseName)
}
func (m *manifests) service(t *testing.T) *corev1.Service {
	return get[corev1.Service](t, m, "Service", releaseName)
}
func (m *manifests) ingress(t *testing.T) *networkingv1.Ingress {
	return get[networkingv1.Ingress](t, m, "Ingress", releaseName)
}
func (m *manifests) pdb(t *testing.T) *policyv1.PodDisruptionBudget {
	return get[policyv1.PodDisruptionBudget](t, m, "PodDisruptionBudget", releaseName)
}
func (m *manifests) configMap(t *testing.T) *corev1.ConfigMap {
	return get[corev1.ConfigMap](t, m, "ConfigMap", releaseName)
}

// chartDependencies are the dependencies Chart.yaml declares, as `helm dependency list` shows.
func chartDependencies(t *testing.T) []*chart.Dependency {
	t.Helper()
	ch, err := loader.Load(chartDir)
	if err != nil {
		t.Fatal(err)
	}
	return ch.Metadata.Dependencies
}

// chartFile reads a file of the chart, for checks on what a reader of it sees.
func chartFile(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(chartDir, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(bytes.TrimSpace(b))
}

// wantErr asserts rendering fails and the error names every hint.
func wantErr(t *testing.T, vals map[string]any, hints ...string) {
	t.Helper()
	_, err := render(t, vals)
	if err == nil {
		t.Fatalf("rendered; want a refusal naming %q", hints)
	}
	for _, h := range hints {
		if !strings.Contains(err.Error(), h) {
			t.Errorf("refusal %q does not name %q", err, h)
		}
	}
}
