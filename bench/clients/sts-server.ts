// The STS GetFederationToken stand-in of the tests, in a process of its own. Prints its URL.
import { startStsServer } from '../../dev/sts-server.ts'

type KeyPair = { accessKeyId: string; secretAccessKey: string }
/** The caller's keys; `issue`: the keys it hands out (a store that checks signatures needs its own). @default BENCH/BENCH */
const { accessKeyId, secretAccessKey, issue } = JSON.parse(process.argv[2] ?? '{}') as KeyPair & { issue?: KeyPair }
const sts = await startStsServer({
  caller: { accessKeyId, secretAccessKey },
  issue: issue ?? { accessKeyId: 'BENCH', secretAccessKey: 'BENCH' },
})
console.log(sts.endpoint)
