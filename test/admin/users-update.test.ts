/**
 * Issue 18 item 3, C13: PATCH (and PUT) /admin/api/v1/users/:id `{user: {email, external_id}}` →
 * 200 with the user. The email follows POST /users' rules (required when given, NAME@DOMAIN,
 * unique whatever its case); a field left out keeps its value; a 422 changes nothing.
 */
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { ADMIN_TOKEN, snapshot, startTestServer, type RequestOptions, type TestServer } from '../helpers/server.ts'

const A = '/admin/api/v1'
const NOT_FOUND = { error: 'The resource you were looking for could not be found.' }

let server: TestServer
let counter = 0
const email = () => `update-${++counter}-${Date.now()}@example.com`

before(async () => {
  server = await startTestServer(undefined)
})
after(() => server.close())

const admin = (method: string, path: string, options: RequestOptions = {}) => server.request(method, `${A}${path}`, { key: ADMIN_TOKEN, ...options })

async function newUser(externalId: string | null = null): Promise<any> {
  const res = await admin('POST', '/users', { json: { user: { email: email(), external_id: externalId } } })
  assert.equal(res.status, 201, res.text)
  return res.body
}

async function refused(id: number, user: unknown, body: unknown): Promise<void> {
  const before = await snapshot(server.store)
  const res = await admin('PATCH', `/users/${id}`, { json: { user } })
  assert.equal(res.status, 422, `${JSON.stringify(user)}: ${res.text}`)
  assert.deepEqual(res.body, body, JSON.stringify(user))
  assert.equal(await snapshot(server.store), before)
}

test('PATCH changes email and external_id and answers the user as GET shows it; PUT is the same route', async () => {
  const user = await newUser('shop-1')
  const address = email()
  const res = await admin('PATCH', `/users/${user.id}`, { json: { user: { email: address, external_id: 'shop-2' } } })
  assert.equal(res.status, 200, res.text)
  assert.deepEqual({ ...res.body, updated_at: '' }, { ...user, email: address, external_id: 'shop-2', updated_at: '' })
  assert.ok(res.body.updated_at >= user.updated_at)
  assert.deepEqual((await admin('GET', `/users/${user.id}`)).body, res.body)
  const put = await admin('PUT', `/users/${user.id}`, { form: 'user[external_id]=shop-3' })
  assert.deepEqual([put.status, put.body.email, put.body.external_id], [200, address, 'shop-3'])
})

test('a field left out keeps its value; external_id null or empty clears it', async () => {
  const user = await newUser('keep-me')
  const onlyEmail = await admin('PATCH', `/users/${user.id}`, { json: { user: { email: email() } } })
  assert.equal(onlyEmail.body.external_id, 'keep-me')
  const cleared = await admin('PATCH', `/users/${user.id}`, { json: { user: { external_id: null } } })
  assert.deepEqual([cleared.status, cleared.body.email, cleared.body.external_id], [200, onlyEmail.body.email, null])
  await admin('PATCH', `/users/${user.id}`, { json: { user: { external_id: 'again' } } })
  assert.equal((await admin('PATCH', `/users/${user.id}`, { json: { user: { external_id: '' } } })).body.external_id, null)
})

test('the email rules of POST /users: taken by another user in any case, invalid, blank; your own in another case is fine', async () => {
  const taken = await newUser()
  const user = await newUser()
  await refused(user.id, { email: taken.email }, { email: ['has already been taken'] })
  await refused(user.id, { email: taken.email.toUpperCase() }, { email: ['has already been taken'] })
  await refused(user.id, { email: 'not an email', external_id: 'x'.repeat(256) }, { email: ['is invalid'], external_id: ['is too long (maximum is 255 characters)'] })
  await refused(user.id, { email: '' }, { email: ["can't be blank"] })
  await refused(user.id, { email: null }, { email: ["can't be blank"] })
  const own = await admin('PATCH', `/users/${user.id}`, { json: { user: { email: user.email.toUpperCase() } } })
  assert.deepEqual([own.status, own.body.email], [200, user.email.toUpperCase()])
})

test('a body that changes nothing writes nothing; an unknown user is 404 before its body is read; no root is 422', async () => {
  const user = await newUser('same')
  const before = await snapshot(server.store)
  const same = await admin('PATCH', `/users/${user.id}`, { json: { user: { email: user.email, external_id: 'same' } } })
  assert.deepEqual([same.status, same.body], [200, user])
  assert.equal(await snapshot(server.store), before)
  const missing = await admin('PATCH', '/users/999999', { json: { user: { email: 'bad' } } })
  assert.deepEqual([missing.status, missing.body], [404, NOT_FOUND])
  const text = 'param is missing or the value is empty: user'
  const noRoot = await admin('PATCH', `/users/${user.id}`, { form: 'email=x@example.com' })
  assert.deepEqual([noRoot.status, noRoot.body], [422, { error: text, exception: text, missing_param: 'user' }])
})
