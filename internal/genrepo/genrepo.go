// Package genrepo writes synthetic kustomize monorepos for kpipe's
// benchmarks and randomized tests: apps x environments overlays over
// per-app bases that share a common base and a component, with config map
// generators, JSON patches, images, replicas, labels and annotations; and,
// when asked (Spec.Regions, Spec.Clusters), what real repositories have
// and caches trip on: overlays whose kustomization files are the same
// bytes and whose same-named patch and generator files differ, components
// alike, a secret generator, and bases reached at several depths; and
// Argo CD Applications over a monorepo's roots (WriteApplications).
//
// It imports nothing of kpipe; tests and benchmarks use it.
package genrepo

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Spec sizes a monorepo.
type Spec struct {
	// Apps and Envs: the tree has Apps*Envs root overlays.
	Apps, Envs int
	// ResourcesPerApp is the number of extra ConfigMaps in each app base
	// (besides its Deployment and Service), to make roots bigger.
	ResourcesPerApp int
	// Regions adds, for each app, that many root overlays
	// apps/<app>/regions/rNN whose kustomization files are the same bytes
	// (the app's base, the monitoring component, a patch.yaml and a
	// config map generated from region.properties), each with its own
	// patch.yaml and region.properties.
	Regions int
	// Clusters adds that many roots platform/clusters/cNN (with Apps at
	// least 1): each includes platform/addons/web, which includes the
	// first app's base, which includes common (a base reached at depths 1
	// to 3 from different roots), applies one of two components
	// platform/tuning/small and large (the same kustomization bytes,
	// different patch.yaml), and generates a Secret from credentials.env.
	// The even clusters' kustomization files are the same bytes, and so
	// are the odd ones'.
	Clusters int
}

// Envs names the environments, cycling with a number past the first four.
func envName(i int) string {
	names := []string{"dev", "staging", "prod", "perf"}
	if i < len(names) {
		return names[i]
	}
	return fmt.Sprintf("env%d", i)
}

// Write creates the monorepo under dir and returns the root overlays'
// directories (relative to dir), in a stable order.
func Write(dir string, s Spec) ([]string, error) {
	files := map[string]string{}
	files["common/kustomization.yaml"] = `apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
- network-policy.yaml
commonAnnotations:
  owner: platform-team
`
	files["common/network-policy.yaml"] = `apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: default-deny
spec:
  podSelector: {}
  policyTypes:
  - Ingress
`
	files["components/monitoring/kustomization.yaml"] = `apiVersion: kustomize.config.k8s.io/v1alpha1
kind: Component
commonLabels:
  monitoring: enabled
patches:
- target:
    kind: Deployment
  patch: |-
    - op: add
      path: /spec/template/metadata/annotations
      value:
        prometheus.io/scrape: "true"
        prometheus.io/port: "9090"
`
	var roots []string
	for a := 0; a < s.Apps; a++ {
		app := fmt.Sprintf("app%03d", a)
		base := "apps/" + app + "/base/"
		res := []string{"deployment.yaml", "service.yaml"}
		for r := 0; r < s.ResourcesPerApp; r++ {
			name := fmt.Sprintf("extra-%02d.yaml", r)
			res = append(res, name)
			files[base+name] = fmt.Sprintf(`apiVersion: v1
kind: ConfigMap
metadata:
  name: %s-extra-%02d
data:
  index: "%d"
  description: extra configuration %d of %s
`, app, r, r, r, app)
		}
		files[base+"kustomization.yaml"] = fmt.Sprintf(`apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
- ../../../common
%s
labels:
- pairs:
    app: %s
  includeSelectors: true
configMapGenerator:
- name: %s-config
  files:
  - application.properties
  literals:
  - LOG_LEVEL=info
`, "- "+strings.Join(res, "\n- "), app, app)
		files[base+"application.properties"] = fmt.Sprintf("server.port=8080\napp.name=%s\nfeature.flags=a,b,c\n", app)
		files[base+"deployment.yaml"] = fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: %[1]s
spec:
  replicas: 1
  template:
    spec:
      containers:
      - name: %[1]s
        image: registry.example.com/%[1]s:1.0.0
        ports:
        - containerPort: 8080
        envFrom:
        - configMapRef:
            name: %[1]s-config
        resources:
          requests:
            cpu: 100m
            memory: 128Mi
`, app)
		files[base+"service.yaml"] = fmt.Sprintf(`apiVersion: v1
kind: Service
metadata:
  name: %[1]s
spec:
  ports:
  - port: 80
    targetPort: 8080
`, app)
		for e := 0; e < s.Envs; e++ {
			env := envName(e)
			ov := "apps/" + app + "/" + env + "/"
			files[ov+"kustomization.yaml"] = fmt.Sprintf(`apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
namespace: %[1]s-%[2]s
namePrefix: %[2]s-
resources:
- ../base
components:
- ../../../components/monitoring
images:
- name: registry.example.com/%[1]s
  newTag: "1.%[3]d.0"
replicas:
- name: %[1]s
  count: %[4]d
configMapGenerator:
- name: %[1]s-config
  behavior: merge
  literals:
  - ENVIRONMENT=%[2]s
commonAnnotations:
  environment: %[2]s
patches:
- path: resources.yaml
  target:
    kind: Deployment
    name: %[1]s
`, app, env, e, e+1)
			files[ov+"resources.yaml"] = fmt.Sprintf(`- op: replace
  path: /spec/template/spec/containers/0/resources/requests/memory
  value: %dMi
`, 128*(e+1))
			roots = append(roots, "apps/"+app+"/"+env)
		}
	}
	for a := 0; a < s.Apps; a++ {
		app := fmt.Sprintf("app%03d", a)
		for r := 0; r < s.Regions; r++ {
			ov := fmt.Sprintf("apps/%s/regions/r%02d/", app, r)
			files[ov+"kustomization.yaml"] = regionKustomization
			files[ov+"patch.yaml"] = fmt.Sprintf("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: %s\n  annotations:\n    region: r%02d\nspec:\n  replicas: %d\n", app, r, r+2)
			files[ov+"region.properties"] = fmt.Sprintf("region=r%02d\nzone=r%02d-a\n", r, r)
			roots = append(roots, strings.TrimSuffix(ov, "/"))
		}
	}
	if s.Clusters > 0 && s.Apps > 0 {
		files["platform/addons/web/kustomization.yaml"] = "resources:\n- ../../../apps/app000/base\nnamePrefix: addon-\n"
		for i, size := range []string{"small", "large"} {
			files["platform/tuning/"+size+"/kustomization.yaml"] = tuningKustomization
			files["platform/tuning/"+size+"/patch.yaml"] = fmt.Sprintf("- op: add\n  path: /metadata/labels/tuning\n  value: %s\n- op: replace\n  path: /spec/template/spec/containers/0/resources/requests/memory\n  value: %dMi\n", size, 256<<i)
		}
		for c := 0; c < s.Clusters; c++ {
			cl := fmt.Sprintf("platform/clusters/c%02d/", c)
			size := []string{"small", "large"}[c%2]
			files[cl+"kustomization.yaml"] = strings.Replace(clusterKustomization, "SIZE", size, 1)
			files[cl+"patch.yaml"] = fmt.Sprintf("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: addon-app000\n  annotations:\n    cluster: c%02d\n", c)
			files[cl+"credentials.env"] = fmt.Sprintf("USER=cluster-%02d\nTOKEN=token-%02d\n", c, c)
			roots = append(roots, strings.TrimSuffix(cl, "/"))
		}
	}
	for p, c := range files {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			return nil, err
		}
	}
	return roots, nil
}

// regionKustomization is every region overlay's kustomization file: the
// same bytes in each.
const regionKustomization = `apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
- ../../base
components:
- ../../../../components/monitoring
configMapGenerator:
- name: region
  files:
  - region.properties
patches:
- path: patch.yaml
`

// tuningKustomization is both tuning components' kustomization file.
const tuningKustomization = `apiVersion: kustomize.config.k8s.io/v1alpha1
kind: Component
patches:
- path: patch.yaml
  target:
    kind: Deployment
`

// clusterKustomization is a cluster's kustomization file, SIZE its tuning.
const clusterKustomization = `apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
- ../../addons/web
components:
- ../../tuning/SIZE
patches:
- path: patch.yaml
secretGenerator:
- name: cluster-credentials
  envs:
  - credentials.env
`

// SharedBaseFile is the file the "one base file changed" benchmarks edit:
// the first app's Deployment, shared by that app's overlays.
const SharedBaseFile = "apps/app000/base/deployment.yaml"
