#!/usr/bin/env node
// Runs the TypeScript sources directly: Node loads them through tsx's ESM hooks.
import { register } from 'tsx/esm/api';

register();
// Traces, when OTEL_TRACES_EXPORTER turns them on, start before the application's modules load.
const { startTracing } = await import('./tracing/start.ts');
await startTracing(process.argv.slice(2), process.env);
await import('./cli.ts');
