#!/usr/bin/env node
// The `conch` CLI from a checkout: on a fresh clone it first installs the CLI's dependencies and bundles it
// (messages on stderr), then runs apps/cli with the given arguments. Once published: `npx -y @conch/cli …`.
import { bootstrap } from './bootstrap.mjs';

await bootstrap('cli');
await import('../apps/cli/dist/bin.cjs');
