import { isBuiltin } from 'node:module'
import { build, type Plugin } from 'esbuild'

/** What a page would ship: one minified ES module, nothing external. */
export interface BrowserBundle {
  code: string
  /** Every source file that went in, relative to the repository root. */
  inputs: string[]
}

/**
 * Bundles `entry` as a browser would get it. Any Node built-in import fails the build with a
 * message naming it: ARCHITECTURE.md says the browser entry never imports one. esbuild with
 * platform 'browser' already refuses most, but `rejectNodeBuiltins` also catches the ones a
 * package.json `browser` field or a future `external` setting could let through.
 */
export async function bundleForBrowser(entry: string | { contents: string; react?: boolean }): Promise<BrowserBundle> {
  // A React page (`react`): TSX, and React's production build, as a page's bundler ships it.
  const react = typeof entry !== 'string' && entry.react
  const result = await build({
    ...(typeof entry === 'string'
      ? { entryPoints: [entry] }
      : { stdin: { contents: entry.contents, loader: react ? 'tsx' : 'ts', resolveDir: process.cwd() } }),
    ...(react && { define: { 'process.env.NODE_ENV': '"production"' } }),
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    write: false,
    minify: true,
    metafile: true,
    logLevel: 'silent',
    plugins: [rejectNodeBuiltins],
  })
  return { code: result.outputFiles[0]!.text, inputs: Object.keys(result.metafile.inputs) }
}

/** The engine's public entry, as a page loads it. */
export const bundleEngine = () => bundleForBrowser('engine/index.ts')

const rejectNodeBuiltins: Plugin = {
  name: 'reject-node-builtins',
  setup(build) {
    build.onResolve({ filter: /.*/ }, ({ path, importer }) =>
      isBuiltin(path)
        ? { errors: [{ text: `browser bundle imports the Node built-in '${path}' (from ${importer || 'the entry'})` }] }
        : undefined,
    )
  },
}
