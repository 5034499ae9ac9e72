#!/bin/sh
# adds objects: one without a path (it goes to [namespace/]kind_name.yaml),
# one with a path in a new directory, two into an existing file
sed -e '/^items:/a\
- apiVersion: v1\
  kind: ConfigMap\
  metadata:\
    name: no-path\
    namespace: team-a\
- apiVersion: v1\
  kind: Service\
  metadata:\
    name: pathed\
    annotations:\
      config.kubernetes.io/path: "made/here/svc.yaml"\
- apiVersion: v1\
  kind: ConfigMap\
  metadata:\
    name: front\
    annotations:\
      internal.config.kubernetes.io/path: two.yaml' -e '/^functionConfig:/i\
- apiVersion: v1\
  kind: ConfigMap\
  metadata:\
    name: back\
    annotations:\
      config.kubernetes.io/path: two.yaml\
  data: {"quoted": "1", plain: 2}'
