// Bundles the worker as wrangler would (workerd, worker and browser conditions; node:* from the
// runtime under nodejs_compat), plus updraft's awsSdkXmlParser: the AWS SDK's browser build
// parses XML with DOMParser, which workerd lacks. wrangler.jsonc runs this as its build command.
// It also bundles the page (src/page.js) into public/, which the worker serves as static assets.
import { build } from 'esbuild'
import { awsSdkXmlParser } from 'updraft-s3/esbuild-plugin'

await build({
  entryPoints: ['src/worker.ts'],
  outfile: 'dist/worker.js',
  bundle: true,
  format: 'esm',
  platform: 'browser',
  conditions: ['workerd', 'worker', 'browser'],
  target: 'es2022',
  external: ['node:*'],
  plugins: [awsSdkXmlParser],
  logLevel: 'warning',
})

await build({
  entryPoints: ['src/page.js'],
  outfile: 'public/page.js',
  bundle: true,
  format: 'esm',
  minify: true,
  logLevel: 'warning',
})
