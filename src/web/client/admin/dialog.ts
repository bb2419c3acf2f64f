import { h, replace, uid, type Child } from '../lib/dom.ts'
import { problemBox } from './ui.ts'
import { t } from './strings.ts'

export interface FormDialogSpec {
  readonly title: string
  readonly body?: string
  /** Controls of the form (labelled: ui.ts `field`); none for a plain confirmation. */
  readonly fields?: readonly HTMLElement[]
  readonly submit: string
  readonly danger?: boolean
  /**
   * What the change would do, from a dry run of it (C18): asked before the change is made, and
   * again whenever a field changes. Its refusal (the API's 422, in its words) is shown as the
   * change's would be, and nothing is confirmed until a preview answered.
   */
  readonly preview?: (form: HTMLFormElement) => Promise<Child>
  /** Runs the change; a refusal (422, 403…) is shown in the dialog, which stays open. */
  readonly onSubmit: (form: HTMLFormElement) => Promise<void>
}

/**
 * A confirmation or a small form in a modal `<dialog>` (lib/dialog.ts's look): the browser traps
 * focus in it and closes it on Escape. Closed without a change (Escape, Cancel), focus goes back
 * to the control that opened it, enabled again (an action button is disabled while its dialog is
 * open). A plain confirmation focuses Cancel first, so an Enter pressed by habit changes nothing.
 * Answers whether the change was made.
 */
export function formDialog(spec: FormDialogSpec): Promise<boolean> {
  const opener = document.activeElement instanceof HTMLElement ? document.activeElement : null
  return new Promise((resolve) => {
    const titleId = uid('dialog-title')
    const dismiss = h('button', { type: 'button', class: 'button secondary' }, t('admin.cancel'))
    const submit = h('button', { type: 'submit', class: `button${spec.danger ? ' danger' : ''}` }, spec.submit)
    const again = h('button', { type: 'button', class: 'button secondary' }, t('admin.preview.button'))
    const previewBox = h('div', { class: 'preview', role: 'status', 'aria-live': 'polite' })
    const form = h('form', { novalidate: true })
    // Fields are named as the API names them, so its 422 marks the ones it refused.
    const problem = problemBox(form)
    form.append(problem.el, spec.body === undefined ? '' : h('p', null, spec.body), ...(spec.fields ?? []),
      spec.preview ? previewBox : '',
      h('div', { class: 'actions' }, dismiss, spec.preview ? again : '', submit))
    const dialog = h('dialog', { class: 'confirm', 'aria-labelledby': titleId }, h('h2', { id: titleId }, spec.title), form)
    let done = false
    // With a preview, the form's current values have been tried (a dry run) when this is true.
    let previewed = false
    let previewRun = 0
    // The values the preview shown was made from: a change event that brings nothing new (a field
    // left after a list already asked for the preview) keeps it.
    let shownFor: string | undefined
    const values = (): string => JSON.stringify([...new FormData(form)].map(([k, v]) => [k, String(v)]))
    const runPreview = async (): Promise<void> => {
      if (!spec.preview) return
      const now = values()
      if (previewed && now === shownFor) return
      const mine = ++previewRun
      previewed = false
      shownFor = now
      problem.clear()
      previewBox.replaceChildren(h('p', { class: 'muted' }, t('admin.preview.loading')))
      // Nothing is confirmed while the dry run of these values runs.
      submit.disabled = true
      try {
        const shown = await spec.preview(form)
        if (mine !== previewRun) return
        replace(previewBox, h('h3', null, t('admin.preview.title')), shown)
        previewed = true
      } catch (err) {
        if (mine !== previewRun) return
        previewBox.replaceChildren()
        problem.show(err)
      }
      submit.disabled = false
    }
    dismiss.addEventListener('click', () => dialog.close())
    if (spec.preview) {
      // A value typed is not the one previewed: the preview goes at once; leaving the field (or
      // choosing in a list), or Preview, asks for the new one. Confirming values not previewed
      // previews them first: nothing is changed that the person has not seen the effect of.
      form.addEventListener('input', () => {
        if (previewed && values() === shownFor) return
        previewRun++
        previewed = false
        submit.disabled = false
        previewBox.replaceChildren()
      })
      form.addEventListener('change', () => void runPreview())
      again.addEventListener('click', () => void runPreview())
    }
    form.addEventListener('submit', (event) => {
      event.preventDefault()
      if (spec.preview && !previewed) return void runPreview()
      submit.disabled = true
      problem.clear()
      spec.onSubmit(form).then(
        () => { done = true; dialog.close() },
        (err: unknown) => { problem.show(err); submit.disabled = false },
      )
    })
    dialog.addEventListener('close', () => {
      dialog.remove()
      if (opener?.isConnected) {
        // The opener is an action button, disabled while its dialog is open: focus needs it enabled.
        if (opener instanceof HTMLButtonElement) opener.disabled = false
        opener.focus()
      }
      resolve(done)
    })
    document.body.append(dialog)
    dialog.showModal()
    const first = spec.fields?.length ? form.querySelector<HTMLElement>('input, select, textarea') : null
    ;(first ?? dismiss).focus()
    if (spec.preview) void runPreview()
  })
}
