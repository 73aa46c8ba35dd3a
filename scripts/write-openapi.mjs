#!/usr/bin/env node
// Writes docs/openapi.json from the route table (built shared/dist; `npm run openapi` builds first).
// test/operate/openapi.test.ts fails when the committed file differs from what this writes.
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { serializeOpenApiDocument } from '../shared/dist/index.js';

const target = fileURLToPath(new URL('../docs/openapi.json', import.meta.url));
writeFileSync(target, serializeOpenApiDocument());
console.log(`wrote ${target}`);
