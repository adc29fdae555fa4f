import { dirname, join } from 'node:path'
import { build, type Plugin } from 'esbuild'

/**
 * Bundles worker source (TypeScript, imports resolved from the repository root) into one ES
 * module as wrangler does for workerd: the `workerd`, `worker` and `browser` conditions, `node:*`
 * left to the runtime (which provides them under the `nodejs_compat` flag).
 */
export async function bundleForWorker(source: string): Promise<string> {
  const result = await build({
    stdin: { contents: source, loader: 'ts', resolveDir: process.cwd() },
    bundle: true,
    format: 'esm',
    platform: 'browser',
    conditions: ['workerd', 'worker', 'browser'],
    target: 'es2022',
    external: ['node:*'],
    write: false,
    logLevel: 'silent',
    plugins: [awsSdkXmlParser],
  })
  return result.outputFiles[0]!.text
}

/**
 * The AWS SDK's `browser` build parses XML replies with DOMParser, which workerd does not have
 * (aws/aws-sdk-js-v3#7375, cloudflare/workers-sdk#10755): every reply with an XML body then fails
 * — CreateMultipartUpload, CompleteMultipartUpload, STS. This points the SDK back at its own
 * pure-JS parser, which its Node build uses.
 */
export const awsSdkXmlParser: Plugin = {
  name: 'aws-sdk-xml-parser',
  setup(build) {
    build.onResolve({ filter: /^\.\/xml-parser$/ }, ({ importer }) =>
      importer.includes('@aws-sdk/xml-builder') ? { path: join(dirname(importer), 'xml-parser.js') } : undefined,
    )
  },
}
