package stages

import (
	"context"
	"fmt"

	"github.com/kpipe/kpipe/internal/resyaml"
	"github.com/kpipe/kpipe/resource"
)

// iamPolicyConfig configures the IAMPolicyGenerator, in the shape of its
// builtin plugin config.
type iamPolicyConfig struct {
	// Cloud is the cloud provider; only "gke" is supported (as in
	// kustomize).
	Cloud             string `json:"cloud"`
	KubernetesService struct {
		Name      string `json:"name"`
		Namespace string `json:"namespace,omitempty"`
	} `json:"kubernetesService"`
	ServiceAccount struct {
		Name      string `json:"name"`
		ProjectID string `json:"projectId"`
	} `json:"serviceAccount"`
}

// newIAMPolicyGenerator returns the IAMPolicyGenerator stage: for GKE, a
// ServiceAccount bound to a cloud service account through the
// iam.gke.io/gcp-service-account annotation.
func newIAMPolicyGenerator(cfg iamPolicyConfig) (Stage, error) {
	if cfg.Cloud != "gke" {
		return nil, fmt.Errorf("cloud provider %s not supported yet", cfg.Cloud)
	}
	// kustomize writes the object as YAML text and parses it, so the
	// values are read as YAML scalars; do the same.
	text := fmt.Sprintf(`
apiVersion: v1
kind: ServiceAccount
metadata:
  annotations:
    iam.gke.io/gcp-service-account: %s@%s.iam.gserviceaccount.com
  name: %s
`, cfg.ServiceAccount.Name, cfg.ServiceAccount.ProjectID, cfg.KubernetesService.Name)
	if cfg.KubernetesService.Namespace != "" {
		text += fmt.Sprintf("\n  namespace: %s", cfg.KubernetesService.Namespace)
	}
	vs, err := resyaml.DecodeValues([]byte(text))
	if err != nil {
		return nil, err
	}
	obj, ok := vs[0].(map[string]any)
	if len(vs) != 1 || !ok {
		return nil, fmt.Errorf("IAMPolicyGenerator: the config does not make one object:\n%s", text)
	}
	r := resource.New(obj)
	r.Freeze()
	return &iamPolicyStage{cfg: cfg, obj: r}, nil
}

// IAMPolicyGeneratorFromConfig configures an IAMPolicyGenerator from its
// builtin plugin config.
func IAMPolicyGeneratorFromConfig(data []byte) (Stage, error) {
	var cfg iamPolicyConfig
	if err := decodeLenientConfig(data, &cfg); err != nil {
		return nil, err
	}
	return newIAMPolicyGenerator(cfg)
}

type iamPolicyStage struct {
	cfg iamPolicyConfig
	obj *resource.Resource
}

func (s *iamPolicyStage) Kind() string        { return "IAMPolicyGenerator" }
func (s *iamPolicyStage) Fingerprint() []byte { return Fingerprint(s.Kind(), s.cfg) }

// Run adds the ServiceAccount; one of the same ID already in rs is an
// error.
func (s *iamPolicyStage) Run(_ context.Context, rs *resource.List) error {
	if err := absorb(rs, s.obj.Clone(), Kustomize582); err != nil {
		return fmt.Errorf("merging from generator %s %q: %w", s.Kind(), s.obj.Name(), err)
	}
	return nil
}
