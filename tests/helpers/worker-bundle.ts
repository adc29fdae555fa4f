import { build } from 'esbuild'
import { awsSdkXmlParser } from '../../server/esbuild-plugin.ts'

/**
 * Bundles worker source (TypeScript, imports resolved from the repository root) into one ES
 * module as wrangler does for workerd: the `workerd`, `worker` and `browser` conditions, `node:*`
 * left to the runtime (which provides them under the `nodejs_compat` flag), with the package's
 * `awsSdkXmlParser` (updraft-s3/esbuild-plugin) so the AWS SDK parses XML without DOMParser.
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
