#!/usr/bin/env node
// The `updraft-s3` command (package.json "bin"): `npx updraft-s3 doctor`, `setup-bucket`, `store`, `init`.
import { main } from './updraft.ts'

process.exitCode = await main(process.argv.slice(2))
