package helmcheck

import (
	"bytes"
	"encoding/json"
	"net"
	"path"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

// teamConfig is config.json as `torii serve --team` reads it (the replica's contract); decoding
// refuses any other key, as the replica's loader does.
type teamConfig struct {
	Listen string `json:"listen"`
	Team   struct {
		Store     string `json:"store"`
		Bus       string `json:"bus"`
		PublicURL string `json:"publicURL"`
		TLS       struct {
			Cert    string `json:"cert"`
			Key     string `json:"key"`
			Ingress bool   `json:"ingress"`
		} `json:"tls"`
		IdentityFile   string `json:"identityFile"`
		AdminTokenFile string `json:"adminTokenFile"`
		Replica        string `json:"replica"`
	} `json:"team"`
}

func configJSON(t *testing.T, m *manifests) teamConfig {
	t.Helper()
	return decodeConfig(t, m, true)
}

// decodeConfig reads config.json; strict refuses keys beyond listen and team (config: {} adds
// the one-machine keys, which the team contract does not list).
func decodeConfig(t *testing.T, m *manifests, strict bool) teamConfig {
	t.Helper()
	raw, ok := m.configMap(t).Data["config.json"]
	if !ok {
		t.Fatal("the ConfigMap has no config.json")
	}
	dec := json.NewDecoder(strings.NewReader(raw))
	if strict {
		dec.DisallowUnknownFields()
	}
	var c teamConfig
	if err := dec.Decode(&c); err != nil {
		t.Fatalf("config.json: %v\n%s", err, raw)
	}
	return c
}

func torii(t *testing.T, d *appsv1.Deployment) corev1.Container {
	t.Helper()
	for _, c := range d.Spec.Template.Spec.Containers {
		if c.Name == "torii" {
			return c
		}
	}
	t.Fatal("no torii container")
	return corev1.Container{}
}

func env(t *testing.T, c corev1.Container, name string) (corev1.EnvVar, int) {
	t.Helper()
	for i, e := range c.Env {
		if e.Name == name {
			return e, i
		}
	}
	t.Fatalf("no %s in the container's environment: %v", name, c.Env)
	return corev1.EnvVar{}, -1
}

// secretFile finds the Secret and key mounted at file: the volume mounted on file's folder must
// be a Secret volume projecting key → file's base name, and the mount read-only.
func secretFile(t *testing.T, d *appsv1.Deployment, file string) (secret, key string) {
	t.Helper()
	c := torii(t, d)
	var vol string
	for _, vm := range c.VolumeMounts {
		if vm.MountPath == path.Dir(file) {
			if !vm.ReadOnly {
				t.Errorf("%s is mounted writable", vm.MountPath)
			}
			vol = vm.Name
		}
	}
	if vol == "" {
		t.Fatalf("nothing is mounted at %s (for %s)", path.Dir(file), file)
	}
	for _, v := range d.Spec.Template.Spec.Volumes {
		if v.Name != vol {
			continue
		}
		if v.Secret == nil {
			t.Fatalf("%s comes from volume %q, which is not a Secret", file, vol)
		}
		for _, it := range v.Secret.Items {
			if it.Path == path.Base(file) {
				return v.Secret.SecretName, it.Key
			}
		}
		t.Fatalf("Secret %s mounted at %s has no item for %s", v.Secret.SecretName, path.Dir(file), path.Base(file))
	}
	t.Fatalf("no volume %q", vol)
	return "", ""
}

// plaintextRefused is the rule the replica enforces at start, checked on what the chart wrote:
// a listen address off loopback needs a certificate and key, or the explicit ingress trust.
func plaintextRefused(t *testing.T, c teamConfig) {
	t.Helper()
	host, _, err := net.SplitHostPort(c.Listen)
	if err != nil {
		t.Fatalf("listen %q: %v", c.Listen, err)
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return
	}
	tls := c.Team.TLS
	if (tls.Cert == "" || tls.Key == "") && !tls.Ingress {
		t.Errorf("config.json listens on %s in plaintext without team.tls.ingress", c.Listen)
	}
	if !strings.HasPrefix(c.Team.PublicURL, "https://") {
		t.Errorf("publicURL %q is not https://", c.Team.PublicURL)
	}
}

// The chart as shipped: what `helm install torii deploy/helm/torii` creates.
func TestDefaultValues(t *testing.T) {
	t.Parallel()
	lint(t, values(t, ""))
	m := mustRender(t, values(t, ""))
	d := m.deployment(t)
	pod := d.Spec.Template.Spec
	c := torii(t, d)

	t.Run("three replicas spread over nodes", func(t *testing.T) {
		if d.Spec.Replicas == nil || *d.Spec.Replicas != 3 {
			t.Errorf("replicas = %v, want 3", d.Spec.Replicas)
		}
		if len(pod.TopologySpreadConstraints) == 0 || pod.TopologySpreadConstraints[0].TopologyKey != "kubernetes.io/hostname" {
			t.Errorf("replicas not spread over nodes: %+v", pod.TopologySpreadConstraints)
		}
	})

	t.Run("probes: ready on /readyz, alive on /healthz, over TLS", func(t *testing.T) {
		r, l := c.ReadinessProbe, c.LivenessProbe
		if r == nil || r.HTTPGet == nil || r.HTTPGet.Path != "/readyz" || r.HTTPGet.Scheme != corev1.URISchemeHTTPS {
			t.Errorf("readiness probe = %+v, want HTTPS GET /readyz", r)
		}
		if l == nil || l.HTTPGet == nil || l.HTTPGet.Path != "/healthz" || l.HTTPGet.Scheme != corev1.URISchemeHTTPS {
			t.Errorf("liveness probe = %+v, want HTTPS GET /healthz", l)
		}
		if len(c.Ports) != 1 || r == nil || r.HTTPGet.Port.String() != c.Ports[0].Name || c.Ports[0].ContainerPort != 8443 {
			t.Errorf("probes do not aim at the container's port %+v", c.Ports)
		}
	})

	t.Run("drain: 45 s grace for a 30 s drain after the pre-stop pause", func(t *testing.T) {
		grace := pod.TerminationGracePeriodSeconds
		if grace == nil || *grace != 45 {
			t.Fatalf("terminationGracePeriodSeconds = %v, want 45", grace)
		}
		var pause int64
		if c.Lifecycle != nil && c.Lifecycle.PreStop != nil && c.Lifecycle.PreStop.Sleep != nil {
			pause = c.Lifecycle.PreStop.Sleep.Seconds
		}
		if pause+30 > *grace {
			t.Errorf("pre-stop %d s + 30 s drain > grace %d s", pause, *grace)
		}
	})

	t.Run("non-root, read-only root, no privilege, no API token", func(t *testing.T) {
		psc, sc := pod.SecurityContext, c.SecurityContext
		if psc == nil || psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot || psc.RunAsUser == nil || *psc.RunAsUser == 0 {
			t.Errorf("pod security context %+v: want runAsNonRoot and a non-zero runAsUser", psc)
		}
		if sc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
			t.Errorf("container root file system is writable: %+v", sc)
		}
		if sc == nil || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
			t.Errorf("privilege escalation allowed: %+v", sc)
		}
		if sc == nil || sc.Capabilities == nil || !slices.Contains(sc.Capabilities.Drop, "ALL") {
			t.Errorf("capabilities not dropped: %+v", sc)
		}
		if pod.AutomountServiceAccountToken == nil || *pod.AutomountServiceAccountToken {
			t.Error("the Kubernetes API token is mounted into the gateway")
		}
		for _, vm := range c.VolumeMounts {
			if vm.ReadOnly {
				continue
			}
			for _, v := range pod.Volumes {
				if v.Name == vm.Name && v.EmptyDir == nil {
					t.Errorf("%s (%s) is writable and not scratch", vm.MountPath, vm.Name)
				}
			}
		}
	})

	cfg := configJSON(t, m)
	t.Run("config.json: TLS listen, files from the Secrets", func(t *testing.T) {
		plaintextRefused(t, cfg)
		if cfg.Listen != "0.0.0.0:8443" || cfg.Team.TLS.Ingress {
			t.Errorf("listen %q ingress=%v, want 0.0.0.0:8443 serving TLS itself", cfg.Listen, cfg.Team.TLS.Ingress)
		}
		if cfg.Team.PublicURL != "https://torii.example.com" {
			t.Errorf("publicURL = %q", cfg.Team.PublicURL)
		}
		if cfg.Team.Store != "" || cfg.Team.Bus != "" {
			t.Errorf("store/bus URLs written into the ConfigMap: %q %q", cfg.Team.Store, cfg.Team.Bus)
		}
		for file, want := range map[string][2]string{
			cfg.Team.TLS.Cert:       {"torii-tls", "tls.crt"},
			cfg.Team.TLS.Key:        {"torii-tls", "tls.key"},
			cfg.Team.IdentityFile:   {"torii-identity", "key"},
			cfg.Team.AdminTokenFile: {"torii-admin", "token"},
		} {
			if s, k := secretFile(t, d, file); s != want[0] || k != want[1] {
				t.Errorf("%s comes from Secret %s key %s, want %s key %s", file, s, k, want[0], want[1])
			}
		}
		dir, _ := env(t, c, "TORII_CONFIG_DIR")
		mounted := false
		for _, vm := range c.VolumeMounts {
			mounted = mounted || (vm.MountPath == dir.Value && vm.Name == "config")
		}
		if !mounted {
			t.Errorf("TORII_CONFIG_DIR=%s is not where the ConfigMap is mounted", dir.Value)
		}
	})

	t.Run("store and bus URLs from Secrets", func(t *testing.T) {
		for name, secret := range map[string]string{"TORII_TEAM_STORE": "torii-store", "TORII_TEAM_BUS": "torii-bus"} {
			e, _ := env(t, c, name)
			if e.Value != "" || e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil ||
				e.ValueFrom.SecretKeyRef.Name != secret || e.ValueFrom.SecretKeyRef.Key != "url" {
				t.Errorf("%s = %+v, want Secret %s key url", name, e, secret)
			}
		}
	})

	t.Run("the admin token is a random Secret, kept", func(t *testing.T) {
		s := get[corev1.Secret](t, m, "Secret", "torii-admin")
		tok := s.Data["token"]
		if len(bytes.TrimSpace(tok)) < 32 {
			t.Errorf("admin token %d bytes, want a long random one", len(tok))
		}
		if s.Annotations["helm.sh/resource-policy"] != "keep" {
			t.Error("the admin token Secret is not kept across uninstall: the token would change")
		}
	})

	t.Run("Service and Ingress reach the replicas' port", func(t *testing.T) {
		svc := m.service(t)
		if len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].TargetPort.String() != c.Ports[0].Name || svc.Spec.Ports[0].Port != 443 {
			t.Errorf("service ports %+v do not target %s", svc.Spec.Ports, c.Ports[0].Name)
		}
		for k, v := range d.Spec.Template.Labels {
			if sv, ok := svc.Spec.Selector[k]; ok && sv != v {
				t.Errorf("service selector %s=%s, pod has %s", k, sv, v)
			}
		}
		ing := m.ingress(t)
		for k, want := range map[string]string{
			"nginx.ingress.kubernetes.io/proxy-read-timeout": "3600",
			"nginx.ingress.kubernetes.io/proxy-send-timeout": "3600",
			"nginx.ingress.kubernetes.io/backend-protocol":   "HTTPS",
		} {
			if got := ing.Annotations[k]; got != want {
				t.Errorf("ingress annotation %s = %q, want %q", k, got, want)
			}
		}
		if len(ing.Spec.TLS) != 1 || ing.Spec.TLS[0].SecretName != "torii-tls" || !slices.Contains(ing.Spec.TLS[0].Hosts, "torii.example.com") {
			t.Errorf("ingress TLS %+v, want torii.example.com from torii-tls", ing.Spec.TLS)
		}
		if len(ing.Spec.Rules) != 1 || ing.Spec.Rules[0].Host != "torii.example.com" {
			t.Fatalf("ingress rules %+v", ing.Spec.Rules)
		}
		be := ing.Spec.Rules[0].HTTP.Paths[0].Backend.Service
		if be.Name != svc.Name || be.Port.Name != svc.Spec.Ports[0].Name {
			t.Errorf("ingress backend %+v is not the Service's port", be)
		}
	})

	t.Run("a disruption budget of one replica at a time", func(t *testing.T) {
		pdb := m.pdb(t)
		if pdb.Spec.MaxUnavailable == nil || pdb.Spec.MaxUnavailable.IntValue() != 1 {
			t.Errorf("maxUnavailable = %v, want 1", pdb.Spec.MaxUnavailable)
		}
		for k, v := range pdb.Spec.Selector.MatchLabels {
			if d.Spec.Template.Labels[k] != v {
				t.Errorf("PDB selector %s=%s does not match the pods", k, v)
			}
		}
	})

	t.Run("optional charts off, no NetworkPolicy", func(t *testing.T) {
		if m.has("NetworkPolicy", releaseName) {
			t.Error("NetworkPolicy rendered while networkPolicy.enabled is false")
		}
		vals := chartFile(t, "values.yaml")
		for _, dep := range chartDependencies(t) {
			if dep.Condition != dep.Name+".enabled" {
				t.Errorf("dependency %s has condition %q, want %s.enabled", dep.Name, dep.Condition, dep.Name)
			}
			if !strings.Contains(vals, dep.Name+":\n  enabled: false") {
				t.Errorf("values.yaml does not turn %s off by default", dep.Name)
			}
		}
	})
}

// The quick start: PostgreSQL and NATS from their charts, the URLs pointing at them.
func TestQuickStartValues(t *testing.T) {
	t.Parallel()
	vals := values(t, quickStartFile)
	lint(t, vals)
	m := mustRender(t, vals)
	d := m.deployment(t)
	c := torii(t, d)
	if *d.Spec.Replicas != 3 {
		t.Errorf("replicas = %d", *d.Spec.Replicas)
	}
	pw, pwAt := env(t, c, "TORII_PG_PASSWORD")
	if pw.ValueFrom == nil || pw.ValueFrom.SecretKeyRef == nil || pw.ValueFrom.SecretKeyRef.Name != "torii-postgresql" || pw.ValueFrom.SecretKeyRef.Key != "password" {
		t.Errorf("TORII_PG_PASSWORD = %+v, want the postgresql chart's Secret torii-postgresql key password", pw)
	}
	store, storeAt := env(t, c, "TORII_TEAM_STORE")
	if store.Value != "postgres://torii:$(TORII_PG_PASSWORD)@torii-postgresql:5432/torii" {
		t.Errorf("TORII_TEAM_STORE = %q", store.Value)
	}
	// Kubernetes expands $(VAR) only from variables defined before it.
	if pwAt > storeAt {
		t.Error("TORII_PG_PASSWORD is defined after TORII_TEAM_STORE, which uses it")
	}
	if bus, _ := env(t, c, "TORII_TEAM_BUS"); bus.Value != "nats://torii-nats:4222" {
		t.Errorf("TORII_TEAM_BUS = %q", bus.Value)
	}
	plaintextRefused(t, configJSON(t, m))
	if s, _ := secretFile(t, d, configJSON(t, m).Team.TLS.Cert); s != "torii-tls" {
		t.Errorf("quick start serves TLS from %s", s)
	}
}

// Behind a TLS-terminating Ingress, trusted explicitly: plaintext inside the pod, TLS outside.
func TestIngressTerminatesTLS(t *testing.T) {
	t.Parallel()
	vals := values(t, "", "tls.ingress=true", "tls.secretName=", "ingress.tls.secretName=edge-cert", "networkPolicy.enabled=true")
	lint(t, vals)
	m := mustRender(t, vals)
	cfg := configJSON(t, m)
	plaintextRefused(t, cfg)
	if !cfg.Team.TLS.Ingress || cfg.Team.TLS.Cert != "" {
		t.Errorf("team.tls = %+v, want ingress only", cfg.Team.TLS)
	}
	d := m.deployment(t)
	c := torii(t, d)
	if c.ReadinessProbe.HTTPGet.Scheme != corev1.URISchemeHTTP {
		t.Errorf("readiness scheme %s, want HTTP", c.ReadinessProbe.HTTPGet.Scheme)
	}
	for _, v := range d.Spec.Template.Spec.Volumes {
		if v.Name == "tls" {
			t.Error("a TLS Secret is mounted though the Ingress terminates TLS")
		}
	}
	ing := m.ingress(t)
	if ing.Annotations["nginx.ingress.kubernetes.io/backend-protocol"] != "HTTP" {
		t.Errorf("backend-protocol %q", ing.Annotations["nginx.ingress.kubernetes.io/backend-protocol"])
	}
	if len(ing.Spec.TLS) != 1 || ing.Spec.TLS[0].SecretName != "edge-cert" {
		t.Errorf("the Ingress does not terminate TLS: %+v", ing.Spec.TLS)
	}
	if !m.has("NetworkPolicy", releaseName) {
		t.Error("networkPolicy.enabled rendered no NetworkPolicy")
	}
}

// Given by URL in values instead of Secrets; own Secrets for the admin token; more config keys;
// extra Ingress annotations that keep the chart's.
func TestOverrides(t *testing.T) {
	t.Parallel()
	vals := values(t, "",
		"store.url=postgres://torii@db.internal:5432/torii?sslmode=verify-full",
		"bus.url=tls://nats.internal:4222",
		"adminToken.existingSecret=ops-torii-admin",
		"replicaCount=5",
		"config.broker.maxInFlight=16",
		"podDisruptionBudget.minAvailable=2",
		"ingress.annotations.cert-manager\\.io/cluster-issuer=letsencrypt",
		"publicURL=https://gw.corp.example:8443",
	)
	lint(t, vals)
	m := mustRender(t, vals)
	d := m.deployment(t)
	c := torii(t, d)
	if e, _ := env(t, c, "TORII_TEAM_STORE"); e.Value != "postgres://torii@db.internal:5432/torii?sslmode=verify-full" {
		t.Errorf("TORII_TEAM_STORE = %+v", e)
	}
	if e, _ := env(t, c, "TORII_TEAM_BUS"); e.Value != "tls://nats.internal:4222" {
		t.Errorf("TORII_TEAM_BUS = %+v", e)
	}
	if m.has("Secret", "torii-admin") {
		t.Error("an admin Secret was made though adminToken.existingSecret is given")
	}
	cfg := decodeConfig(t, m, false)
	plaintextRefused(t, cfg)
	if s, _ := secretFile(t, d, cfg.Team.AdminTokenFile); s != "ops-torii-admin" {
		t.Errorf("admin token from %s", s)
	}
	if *d.Spec.Replicas != 5 {
		t.Errorf("replicas = %d", *d.Spec.Replicas)
	}
	raw := m.configMap(t).Data["config.json"]
	if !strings.Contains(raw, `"maxInFlight": 16`) {
		t.Errorf("config.broker not passed into config.json:\n%s", raw)
	}
	pdb := m.pdb(t)
	if pdb.Spec.MinAvailable == nil || pdb.Spec.MinAvailable.IntValue() != 2 || pdb.Spec.MaxUnavailable != nil {
		t.Errorf("PDB %+v, want minAvailable 2 only", pdb.Spec)
	}
	ing := m.ingress(t)
	if ing.Annotations["cert-manager.io/cluster-issuer"] != "letsencrypt" || ing.Annotations["nginx.ingress.kubernetes.io/proxy-read-timeout"] != "3600" {
		t.Errorf("annotations %v", ing.Annotations)
	}
	if ing.Spec.Rules[0].Host != "gw.corp.example" {
		t.Errorf("ingress host %q from publicURL with a port", ing.Spec.Rules[0].Host)
	}
}

// Each wrong install is refused before anything is created, with the fix in the message.
func TestRefusals(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		sets  []string
		hints []string
	}{
		{"plaintext public URL", []string{"publicURL=http://torii.example.com"}, []string{"https://", "publicURL"}},
		{"ws public URL", []string{"publicURL=ws://torii.example.com"}, []string{"https://"}},
		{"no TLS at all", []string{"tls.secretName="}, []string{"tls.secretName", "tls.ingress=true"}},
		{"ingress trusted but absent", []string{"tls.ingress=true", "ingress.enabled=false"}, []string{"ingress.enabled", "tls.secretName"}},
		{"no identity key", []string{"identity.existingSecret="}, []string{"identity.existingSecret", "openssl genpkey"}},
		{"no store", []string{"store.existingSecret="}, []string{"store.existingSecret", "postgres://"}},
		{"no bus", []string{"bus.existingSecret="}, []string{"bus.existingSecret", "nats://"}},
		{"SQLite for three replicas", []string{"store.url=sqlite:/var/lib/torii/state/team.db"}, []string{"SQLite", "replicaCount=1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			wantErr(t, values(t, "", tc.sets...), tc.hints...)
		})
	}
}
