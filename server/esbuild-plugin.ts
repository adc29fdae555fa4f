import { dirname, join } from 'node:path'

/** The part of esbuild's `Plugin` type this plugin uses (so the package needs no esbuild types). */
export interface EsbuildPlugin {
  name: string
  setup(build: {
    onResolve(
      options: { filter: RegExp },
      callback: (args: { path: string; importer: string }) => { path: string } | undefined,
    ): void
  }): void
}

/**
 * For Cloudflare Workers bundled with esbuild (`conditions: ['workerd', 'worker', 'browser']`, as
 * wrangler bundles): the AWS SDK's browser build parses XML replies with `DOMParser`, which
 * workerd does not have (aws/aws-sdk-js-v3#7375, cloudflare/workers-sdk#10755), so token mode
 * (STS) and presigned multipart (CreateMultipartUpload, CompleteMultipartUpload) fail with
 * `DOMParser is not defined`. This plugin points the SDK back at its own pure-JS parser, which
 * its Node build uses. Single presigned PUTs need no XML and work without it.
 *
 * @example
 * ```ts
 * import { build } from 'esbuild'
 * import { awsSdkXmlParser } from 'updraft-s3/esbuild-plugin'
 *
 * await build({
 *   entryPoints: ['src/worker.ts'], outfile: 'dist/worker.js', bundle: true, format: 'esm',
 *   platform: 'browser', conditions: ['workerd', 'worker', 'browser'], external: ['node:*'],
 *   plugins: [awsSdkXmlParser],
 * })
 * ```
 */
export const awsSdkXmlParser: EsbuildPlugin = Object.freeze<EsbuildPlugin>({
  name: 'aws-sdk-xml-parser',
  setup(build) {
    build.onResolve({ filter: /^\.\/xml-parser$/ }, ({ importer }) =>
      importer.includes('@aws-sdk/xml-builder') ? { path: join(dirname(importer), 'xml-parser.js') } : undefined,
    )
  },
})
