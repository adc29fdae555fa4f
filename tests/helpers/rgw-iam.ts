import { AwsClient } from 'aws4fetch'
import type { RgwStore } from '../../dev/stores.ts'

/** The RGW user the test keys belong to (dev/rgw/bootstrap.sh). */
export const RGW_TEST_USER_ARN = 'arn:aws:iam:::user/tester'

/**
 * RGW's IAM API (the test user has `roles=*` caps): a role with this trust policy and one inline
 * permission policy, for tests that need a role set up as the README tells deployers to.
 * Returns the role's ARN.
 */
export async function createRole(store: RgwStore, name: string, trust: object, permissions: object): Promise<string> {
  await iam(store, { Action: 'CreateRole', RoleName: name, Path: '/', AssumeRolePolicyDocument: JSON.stringify(trust) })
  await iam(store, {
    Action: 'PutRolePolicy',
    RoleName: name,
    PolicyName: 'permissions',
    PolicyDocument: JSON.stringify(permissions),
  })
  return `arn:aws:iam:::role/${name}`
}

async function iam(store: RgwStore, params: Record<string, string>): Promise<string> {
  const client = new AwsClient({ ...store.credentials, service: 'iam', region: store.region })
  const response = await client.fetch(`${store.endpoint}/`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ ...params, Version: '2010-05-08' }).toString(),
  })
  const text = await response.text()
  if (!response.ok) throw new Error(`RGW IAM ${params.Action} answered ${response.status}: ${text.slice(0, 300)}`)
  return text
}
