// `npm run api`: an API report per package entry (api/*.api.md, @microsoft/api-extractor), made from
// the built .d.ts files. `npm run api -- --check` (CI) fails when the public surface differs
// from the checked-in reports: change them on purpose, with `npm run api`, in the same commit.
//
// Both also fail when a public signature names a type no entry exports (a user could not write
// it down) or a name is exported by two entries (see api-surface.ts).
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import {
  CompilerState,
  Extractor,
  ExtractorConfig,
  ExtractorLogLevel,
  type ExtractorMessage,
} from '@microsoft/api-extractor'
import { packageSurface } from './api-surface.ts'
import { ensurePackageBuilt, ROOT } from './build.ts'

const check = process.argv.includes('--check')
const { exports } = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as {
  exports: Record<string, string | { types: string }>
}
await ensurePackageBuilt()

const entries = Object.entries(exports)
  .filter((entry): entry is [string, { types: string }] => typeof entry[1] !== 'string') // ./package.json, ./react/ui/styles.css
  .map(([subpath, target]) => {
    const name = subpath === '.' ? 'updraft-s3' : `updraft-s3-${subpath.slice(2).replace(/\//g, '-')}`
    const config = ExtractorConfig.prepare({
      configObject: {
        projectFolder: ROOT,
        mainEntryPointFilePath: join(ROOT, target.types),
        compiler: { tsconfigFilePath: join(ROOT, 'tsconfig.build.json') },
        apiReport: {
          enabled: true,
          reportFileName: `${name}.api.md`,
          reportFolder: join(ROOT, 'api'),
          reportTempFolder: join(ROOT, 'dist', 'api'),
        },
        docModel: { enabled: false },
        dtsRollup: { enabled: false },
        tsdocMetadata: { enabled: false },
        messages: {
          // Missing release tags and doc comments are the public-API pass's business; the report is the point here.
          extractorMessageReporting: {
            default: { logLevel: 'none' as never },
            // A type in a public signature that the user cannot import by name; a public signature
            // naming an @internal or @beta type. Exported by another entry is fine: see below.
            'ae-forgotten-export': { logLevel: 'error' as never, addToApiReportFile: false },
            'ae-incompatible-release-tags': { logLevel: 'error' as never, addToApiReportFile: false },
          },
          tsdocMessageReporting: { default: { logLevel: 'none' as never } },
          compilerMessageReporting: { default: { logLevel: 'warning' as never } },
        },
      },
      configObjectFullPath: join(ROOT, 'api', `${name}.json`),
      packageJsonFullPath: join(ROOT, 'package.json'),
    })
    return { subpath, name, file: config.mainEntryPointFilePath, config }
  })

// One program for every entry: each report reuses it, and it tells which entry exports what.
const compilerState = CompilerState.create(entries[0]!.config, {
  additionalEntryPoints: entries.map(({ file }) => file),
})
const surface = packageSurface(compilerState.program, entries)
let errors = surface.duplicates.length
for (const duplicate of surface.duplicates) console.error(`error: ${duplicate}`)

let changed = 0
for (const { subpath, name, file, config } of entries) {
  const messageCallback = (message: ExtractorMessage) => {
    if (message.messageId !== 'ae-forgotten-export') return
    // API Extractor looks at one entry at a time: a type another entry exports is importable.
    if (surface.exportedElsewhere(message, file)) message.logLevel = ExtractorLogLevel.None
    else {
      message.handled = true
      const symbol = /"(.+?)"/.exec(message.text)?.[1]
      const where = `${message.sourceFilePath?.slice(ROOT.length)}:${message.sourceFileLine}`
      const twin = /_\d+$/.test(symbol ?? '')
        ? ` (two types named ${symbol!.replace(/_\d+$/, '')} reach this entry: one name per concept)`
        : ''
      console.error(
        `error: ${subpath}: a public signature (${where}) names "${symbol}", which no entry exports${twin}: export it from the entry it belongs to, or take it out of the signature`,
      )
    }
  }
  const result = Extractor.invoke(config, {
    localBuild: !check,
    showVerboseMessages: false,
    compilerState,
    messageCallback,
  })
  errors += result.errorCount
  if (result.apiReportChanged) {
    changed++
    console.log(`${check ? 'CHANGED' : 'updated'} api/${name}.api.md`)
  }
}
if (errors > 0) {
  console.error(`\n${errors} error(s): the published typings would not tell the truth.`)
  process.exitCode = 1
} else if (check && changed > 0) {
  console.log(
    `\nThe public API differs from api/*.api.md in ${changed} entr${changed === 1 ? 'y' : 'ies'}: if that is intended, run \`npm run api\` and commit the reports.`,
  )
  process.exitCode = 1
} else console.log(check ? 'API reports match.' : 'API reports written.')
