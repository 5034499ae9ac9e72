#!/bin/sh
# moves the first object to index 5 (current spelling only) and renames a path (legacy spelling only)
sed -e "s/internal.config.kubernetes.io\/index: '1'/internal.config.kubernetes.io\/index: '5'/" -e "s/^      config.kubernetes.io\/path: 'more.yaml'/      config.kubernetes.io\/path: 'renamed.yaml'/" -e 's/old-value/new-value/'
