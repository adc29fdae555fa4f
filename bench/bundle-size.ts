import { ensurePackageBuilt } from '../scripts/build.ts'
import { BUDGETS, type BundleSize, measureBundle, PEER_ENTRIES, UPDRAFT_ENTRIES } from './lib/bundle.ts'
import { bundleCharts } from './lib/chart-specs.ts'
import { type Benchmark, fixed, ratio, type Table } from './lib/report.ts'

/** Issue 5, item 1: what a page ships, Updraft's entries beside the peers'. Deterministic: one build each. */
export const bundleSize: Benchmark = {
  name: 'bundle',
  title: '1. Bundle size (esbuild, browser, ESM, minified)',
  charts: bundleCharts,
  async run() {
    await ensurePackageBuilt() // Updraft's entries are measured on the built package
    const sizes: Record<string, BundleSize> = {}
    // Token mode's signer on its own: aws4fetch's AwsV4Signer and the engine's wrapper, a lazy chunk of the token paths.
    const signer = {
      label: 'for reference: the SigV4 signer alone (aws4fetch + engine/s3/aws4fetch-signer.ts)',
      contents: `export { signV4 } from './dist/lib/engine/s3/aws4fetch-signer.js'`,
    }
    const all = { ...UPDRAFT_ENTRIES, signer, ...PEER_ENTRIES }
    for (const [name, entry] of Object.entries(all)) sizes[name] = await measureBundle(entry)
    const token = sizes.upload!
    const rows = Object.entries(all).map(([name, entry]) => {
      const size = sizes[name]!
      return [
        entry.label,
        String(size.min),
        String(size.gzip),
        String(size.allGzip),
        String(size.brotli),
        ratio(size.gzip / token.gzip),
      ]
    })
    const budgetRows = BUDGETS.map(({ entry, limit, what }) => {
      const gzip = sizes[entry]!.gzip
      return [
        what,
        String(gzip),
        String(limit),
        `${gzip - limit > 0 ? '+' : ''}${gzip - limit}`,
        gzip <= limit ? 'within' : 'OVER',
      ]
    })
    const tables: Table[] = [
      {
        title: 'Bytes shipped',
        columns: [
          'bundle',
          'min B (with the page)',
          'gzip B (with the page)',
          'gzip B (with lazy chunks)',
          'brotli B',
          'gzip vs Updraft upload()',
        ],
        rows,
      },
      {
        title: 'Budget (gzip, 1 KB = 1000 B)',
        columns: ['path', 'gzip B', 'budget B', 'over by B', 'status'],
        rows: budgetRows,
      },
      whereBytesGo('Where the bytes go: `upload()` (minified bytes per input, esbuild metafile)', token),
      whereBytesGo('Where the bytes go: `uploadWithToken()`', sizes.token!),
      whereBytesGo('Where the bytes go: `uploadPresigned()`', sizes.presigned!),
    ]
    const kb = (bytes: number) => `${fixed(bytes / 1000, 2)} KB`
    const presigned = sizes.presigned!
    return {
      tables,
      headlines: [
        `Bundle (gzip): Updraft \`upload()\` ${kb(token.gzip)} (both modes, with the page; its signer and multipart code load lazily) vs lib-storage ${kb(sizes.libStorage!.gzip)} (${fixed(sizes.libStorage!.gzip / token.gzip, 0)}x smaller) and Uppy ${kb(sizes.uppy!.gzip)} (${fixed(sizes.uppy!.gzip / token.gzip, 1)}x); token-only ${kb(sizes.token!.gzip)}, presigned-only ${kb(presigned.gzip)} (${fixed(sizes.libStorage!.gzip / presigned.gzip, 0)}x smaller than lib-storage); React hook ${kb(sizes.react!.gzip)} vs next-s3-upload's ${kb(sizes.nextS3Upload!.gzip)} (${fixed(sizes.nextS3Upload!.gzip / sizes.react!.gzip, 0)}x).`,
      ],
      goals: [
        // Goals, not CI limits: `npm run size` enforces `limit`, which today sits above every goal.
        ...BUDGETS.map(({ entry, goal, limit, what }) => {
          const size = sizes[entry]!
          // What loads with the page, which the goal bounds.
          const top = size.inputs
            .filter(({ lazy }) => !lazy)
            .slice(0, 4)
            .map(({ path, bytes }) => `${shortPath(path)} ${bytes} B`)
            .join(', ')
          return {
            goal: `${what} <= ${kb(goal)} gzip`,
            figure: `${size.gzip} B = ${kb(size.gzip)}`,
            met: size.gzip <= goal,
            note:
              (size.gzip <= goal ? `${goal - size.gzip} B to spare.` : `${size.gzip - goal} B over.`) +
              ` \`npm run size\` holds it at ${limit} B (bench/lib/bundle.ts says what each issue's bytes above the goal buy). Largest inputs (minified): ${top}.`,
          }
        }),
      ],
      notes: [
        `lib-storage path ${kb(sizes.libStorage!.gzip)} gzip is ${fixed(sizes.libStorage!.gzip / token.gzip, 0)}x Updraft's upload(); Uppy ${kb(sizes.uppy!.gzip)} is ${fixed(sizes.uppy!.gzip / token.gzip, 1)}x; next-s3-upload's hook ${kb(sizes.nextS3Upload!.gzip)} is ${fixed(sizes.nextS3Upload!.gzip / sizes.react!.gzip, 0)}x Updraft's hook.`,
        'React (and Next.js for next-s3-upload) are external in the hook rows: the page ships them anyway.',
        'gzip level 9, brotli quality 11. `npx tsx bench/size-check.ts` fails (exit 1) when a budget is exceeded.',
      ],
    }
  },
}

function whereBytesGo(title: string, size: BundleSize): Table {
  const total = size.inputs.reduce((sum, input) => sum + input.bytes, 0)
  return {
    title,
    columns: ['input', 'min B', 'share', 'loads'],
    rows: size.inputs.map(({ path, bytes, lazy }) => [
      shortPath(path),
      String(bytes),
      `${fixed((100 * bytes) / total, 1)}%`,
      lazy ? 'lazily' : 'with the page',
    ]),
  }
}

/** `dist/lib/engine/s3/put.js` → `engine/s3/put.js`, `node_modules/x/y.js` → `x/y.js`. */
const shortPath = (path: string) => path.replace(/^(dist\/lib|node_modules)\//, '')
