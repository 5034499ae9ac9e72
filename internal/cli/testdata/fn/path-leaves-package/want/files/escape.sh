#!/bin/sh
sed -e '/^items:/a\
- apiVersion: v1\
  kind: ConfigMap\
  metadata:\
    name: escapee\
    annotations:\
      config.kubernetes.io/path: ../outside.yaml'
