"""User policies: the policy classes a policy author subclasses (`classes`,
exported as `serq.policies`), binding them to a program and checking their
decisions (`guards`), and reporting a policy that raises (`policy_failure`).

May import: `serq.runtime.resources`, `serq.runtime.kernel`, `serq.runtime.watch` (the watchdog that stops a policy call that does not return), `serq.core`.
"""
