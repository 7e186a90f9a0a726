// The prompts of a waiting run, answered in the page: an approval, questions, a plan.
import { post, problem } from './api.js'

const { el, longText, shown } = globalThis.CordageStudio

/** A prompt for `request` of run `runId`; `done()` once it is answered (or answered elsewhere). */
export function pendingPrompt(runId, request, done) {
  const box = el('section', 'prompt')
  const headingId = `prompt-${request.id}`
  box.setAttribute('role', 'group')
  box.setAttribute('aria-labelledby', headingId)
  const heading = el('h2')
  heading.id = headingId
  const status = el('div')
  status.setAttribute('role', 'status')
  const actions = el('div', 'actions')
  async function answer(value, buttons) {
    for (const button of buttons) button.disabled = true
    try {
      await post(`/api/runs/${encodeURIComponent(runId)}/answers`, { requestId: request.id, answer: value })
      done()
    } catch (error) {
      if (error.code === 'ALREADY_ANSWERED' || error.code === 'REQUEST_NOT_FOUND') return done()
      status.replaceChildren(problem(error))
      for (const button of buttons) button.disabled = false
    }
  }
  function button(text, className, value, label) {
    const node = el('button', className, text)
    node.type = 'button'
    if (label) node.setAttribute('aria-label', shown(label))
    node.addEventListener('click', () => answer(typeof value === 'function' ? value() : value, actions.querySelectorAll('button')))
    return node
  }
  if (request.kind === 'approval') {
    heading.textContent = shown(`Approve ${request.tool}?`)
    box.append(heading)
    if (request.reason) box.append(el('p', '', request.reason))
    box.append(el('h3', '', 'Arguments'), longText('args', JSON.stringify(request.arguments, null, 2)))
    actions.append(
      button('Allow', 'primary', 'allow', `Allow ${request.tool} this once`),
      button('Always allow', '', 'always', `Always allow ${request.tool}`),
      button('Deny', '', 'deny', `Deny ${request.tool}`),
    )
  } else if (request.kind === 'question') {
    heading.textContent = request.questions.length === 1 ? 'A question for you' : `${request.questions.length} questions for you`
    box.append(heading)
    const readers = request.questions.map((question, index) => questionFields(box, question, `${request.id}-${index}`))
    actions.append(button('Answer', 'primary', () => readers.map((read) => read())))
  } else if (request.kind === 'plan') {
    heading.textContent = 'Review the plan'
    box.append(heading, longText('plan', request.plan))
    const label = el('label', '', 'Feedback (when keeping the plan in planning)')
    const feedback = el('textarea')
    feedback.rows = 2
    label.append(feedback)
    box.append(label)
    actions.append(
      button('Approve plan', 'primary', { approved: true }),
      button('Keep planning', '', () => (feedback.value ? { approved: false, feedback: feedback.value } : { approved: false })),
    )
  } else {
    heading.textContent = shown(`Unknown request ${request.kind}`)
    box.append(heading)
  }
  box.append(actions, status)
  return box
}

function questionFields(box, question, key) {
  const fieldset = el('fieldset')
  fieldset.append(el('legend', '', question.header ? `${question.header}: ${question.question}` : question.question))
  const inputs = []
  question.options.forEach((option, index) => {
    const label = el('label')
    const input = el('input')
    input.type = question.multiSelect ? 'checkbox' : 'radio'
    input.name = key
    input.value = option.label
    input.id = `${key}-${index}`
    label.htmlFor = input.id
    label.append(` ${shown(option.label)}`)
    if (option.description) label.append(el('span', 'note', ` — ${option.description}`))
    const line = el('div')
    line.append(input, label)
    fieldset.append(line)
    inputs.push(input)
  })
  const customLabel = el('label', '', 'Other answer ')
  const custom = el('input')
  custom.type = 'text'
  customLabel.append(custom)
  fieldset.append(customLabel)
  box.append(fieldset)
  return () => ({
    id: question.id,
    selected: inputs.filter((input) => input.checked).map((input) => input.value),
    ...(custom.value && { custom: custom.value }),
  })
}
