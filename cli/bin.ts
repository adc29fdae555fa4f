#!/usr/bin/env node
// The `updraft` command (package.json "bin"): `npx updraft doctor`, `npx updraft setup-bucket`.
import { main } from './updraft.ts'

process.exitCode = await main(process.argv.slice(2))
