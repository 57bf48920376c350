#!/usr/bin/env node
// Runs the TypeScript sources directly: Node loads them through tsx's ESM hooks.
import { register } from 'tsx/esm/api';

register();
await import('./cli.ts');
