// Sign in with email and password (`POST /api/session`). Wrong credentials (401) and too many
// failures (429, with the wait from Retry-After) are explained in the page, next to the form.
// On a server with demo data, the demo's accounts are listed below it (`GET /api/sign-in`).

import { h, replace } from "/sdk/ui.js";
import { api, describeError, formatWait } from "../api.js";
import { focusHeading } from "../dom.js";
import { ROLE_LABELS } from "../format.js";

/** `onSignedIn(context)` runs after a successful sign-in. `notice` is shown above the form. */
export function renderSignIn(root, { onSignedIn, notice }) {
  const error = h("p", { id: "signin-error", class: "form-error", role: "alert", hidden: true });
  const email = h("input", { id: "signin-email", name: "email", type: "email", autocomplete: "username", required: true, spellcheck: "false" });
  const password = h("input", { id: "signin-password", name: "password", type: "password", autocomplete: "current-password", required: true });
  const submit = h("button", { type: "submit", class: "primary" }, "Sign in");
  const demo = h("details", { id: "signin-demo", class: "hint", hidden: true });

  const showError = (message) => {
    error.textContent = message;
    error.hidden = false;
    email.setAttribute("aria-describedby", "signin-error");
  };

  const form = h("form", { class: "signin-form", novalidate: true, on: { submit: async (event) => {
    event.preventDefault();
    error.hidden = true;
    if (!email.value.trim() || !password.value) {
      showError("Enter your email and password.");
      (email.value.trim() ? password : email).focus();
      return;
    }
    submit.disabled = true;
    submit.textContent = "Signing in…";
    try {
      const context = await api.signIn(email.value.trim(), password.value);
      password.value = "";
      await onSignedIn(context);
    } catch (failure) {
      if (failure.status === 401) {
        showError("The email or password is wrong.");
        password.select();
        password.focus();
      } else if (failure.status === 429) {
        showError(failure.retryAfter
          ? `Too many failed sign-ins for this email. Try again in ${formatWait(failure.retryAfter)}.`
          : "Too many failed sign-ins for this email. Try again later.");
      } else {
        showError(describeError(failure));
      }
    } finally {
      submit.disabled = false;
      submit.textContent = "Sign in";
    }
  } } },
  h("div", { class: "field" }, h("label", { for: "signin-email" }, "Email"), email),
  h("div", { class: "field" }, h("label", { for: "signin-password" }, "Password"), password),
  error,
  submit);

  replace(root, h("section", { class: "signin" },
    h("h1", {}, "Sign in"),
    h("p", { class: "muted" }, "The reference app of toolbridge: quotes, tools, and the settings that manage them."),
    notice ? h("p", { class: "notice", role: "status" }, notice) : null,
    form,
    demo));
  focusHeading(root);
  email.focus();
  showDemoSignIns(demo);
  return {};
}

/** Fills `into` with the demo's sign-ins when the server has demo data; leaves it empty (and
 * hidden) on a server without, as in production. */
async function showDemoSignIns(into) {
  let help;
  try {
    help = await api.signInHelp();
  } catch (failure) {
    console.warn("could not read the sign-in page's help", failure);
    return;
  }
  const signIns = Array.isArray(help?.demoSignIns) ? help.demoSignIns : [];
  if (!signIns.length || !into.isConnected) return;
  replace(into,
    h("summary", {}, "Demo accounts"),
    h("p", {}, `This server has demo data. Every demo account's password is ${signIns[0].password}.`),
    h("ul", {}, ...signIns.map((signIn) =>
      h("li", {}, h("code", {}, signIn.email), ` (${ROLE_LABELS[signIn.role] ?? signIn.role}, ${signIn.tenantName})`))));
  into.hidden = false;
}
