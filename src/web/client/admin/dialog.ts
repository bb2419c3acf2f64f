import { h, uid } from '../lib/dom.ts'
import { problemBox } from './ui.ts'
import { t } from './strings.ts'

export interface FormDialogSpec {
  readonly title: string
  readonly body?: string
  /** Controls of the form (labelled: ui.ts `field`); none for a plain confirmation. */
  readonly fields?: readonly HTMLElement[]
  readonly submit: string
  readonly danger?: boolean
  /** Runs the change; a refusal (422, 403…) is shown in the dialog, which stays open. */
  readonly onSubmit: (form: HTMLFormElement) => Promise<void>
}

/**
 * A confirmation or a small form in a modal `<dialog>` (lib/dialog.ts's look): the browser traps
 * focus in it and closes it on Escape, and focus returns to the button that opened it. A plain
 * confirmation focuses Cancel first, so an Enter pressed by habit changes nothing. Answers whether
 * the change was made.
 */
export function formDialog(spec: FormDialogSpec): Promise<boolean> {
  const opener = document.activeElement instanceof HTMLElement ? document.activeElement : null
  return new Promise((resolve) => {
    const titleId = uid('dialog-title')
    const problem = problemBox()
    const dismiss = h('button', { type: 'button', class: 'button secondary' }, t('admin.cancel'))
    const submit = h('button', { type: 'submit', class: `button${spec.danger ? ' danger' : ''}` }, spec.submit)
    const form = h('form', { novalidate: true }, problem.el, spec.body === undefined ? null : h('p', null, spec.body), spec.fields ?? [],
      h('div', { class: 'actions' }, dismiss, submit))
    const dialog = h('dialog', { class: 'confirm', 'aria-labelledby': titleId }, h('h2', { id: titleId }, spec.title), form)
    let done = false
    dismiss.addEventListener('click', () => dialog.close())
    form.addEventListener('submit', (event) => {
      event.preventDefault()
      submit.disabled = true
      problem.clear()
      spec.onSubmit(form).then(
        () => { done = true; dialog.close() },
        (err: unknown) => { problem.show(err); submit.disabled = false },
      )
    })
    dialog.addEventListener('close', () => {
      dialog.remove()
      opener?.focus()
      resolve(done)
    })
    document.body.append(dialog)
    dialog.showModal()
    const first = spec.fields?.length ? form.querySelector<HTMLElement>('input, select, textarea') : null
    ;(first ?? dismiss).focus()
  })
}
