#!/bin/sh
cat >/dev/null
echo "the function says why on stderr" >&2
cat <<END
apiVersion: config.kubernetes.io/v1
kind: ResourceList
items: []
results:
- message: replicas must be set
  severity: error
  resourceRef: {kind: Deployment, name: web}
END
exit 3
