// Sign in with email and password (`POST /api/session`). Wrong credentials (401) and too many
// failures (429, with the wait from Retry-After) are explained in the page, next to the form.

import { h, replace } from "/sdk/ui.js";
import { api, describeError, formatWait } from "../api.js";
import { focusHeading } from "../dom.js";

/** `onSignedIn(context)` runs after a successful sign-in. `notice` is shown above the form. */
export function renderSignIn(root, { onSignedIn, notice }) {
  const error = h("p", { id: "signin-error", class: "form-error", role: "alert", hidden: true });
  const email = h("input", { id: "signin-email", name: "email", type: "email", autocomplete: "username", required: true, spellcheck: "false" });
  const password = h("input", { id: "signin-password", name: "password", type: "password", autocomplete: "current-password", required: true });
  const submit = h("button", { type: "submit", class: "primary" }, "Sign in");

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
    h("details", { class: "hint" },
      h("summary", {}, "Demo accounts"),
      h("p", {}, "On a server started with demo data (toolbridge serve --demo, as cargo xtask serve does): admin@harbour.test, office@harbour.test or field@harbour.test, password demo-password. Elsewhere, your administrator gives you your sign-in."))));
  focusHeading(root);
  email.focus();
  return {};
}
