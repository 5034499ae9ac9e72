{apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'from-jsonnet'}, data: {rev: std.extVar('rev')}}
