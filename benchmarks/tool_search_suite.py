# ruff: noqa: E501  (one tool a line, as MCP servers list them)
"""The tool-search suite: 225 tools in nine families, written as MCP servers describe theirs
(github, jira, slack, fs, db, calendar, email, k8s, billing), and 64 tasks whose right tool is
known, each with the task's text and a short query a model might type as its second search.

Each tool line is ``name|description|param,param``; every parameter is a string, described
by its name. The tools are generated: they are data for ranking and for counting schema
tokens, and no function runs them.
"""

from __future__ import annotations

from typing import Any

from reactloop.tools.base import Tool

FAMILIES = {
    "github": """
create_issue|Create a new issue in a GitHub repository|owner,repo,title,body,labels
get_issue|Get the details of an issue in a GitHub repository|owner,repo,issue_number
list_issues|List issues in a GitHub repository, filtered by state and labels|owner,repo,state
update_issue|Update the title, body, state or labels of an existing issue|owner,repo,issue_number,title,state
add_issue_comment|Add a comment to an issue or pull request|owner,repo,issue_number,body
list_pull_requests|List pull requests in a repository|owner,repo,state,base
get_pull_request|Get the details of a pull request|owner,repo,pull_number
create_pull_request|Open a new pull request from a head branch into a base branch|owner,repo,title,head,base,body
merge_pull_request|Merge a pull request|owner,repo,pull_number,merge_method
get_pull_request_diff|Get the diff of a pull request|owner,repo,pull_number
request_reviewers|Request reviewers for a pull request|owner,repo,pull_number,reviewers
create_review|Submit a review (approve, comment or request changes) on a pull request|owner,repo,pull_number,event,body
list_commits|List the commits of a branch|owner,repo,sha
get_commit|Get a commit with its changed files|owner,repo,sha
create_branch|Create a new branch from an existing ref|owner,repo,branch,from_branch
delete_branch|Delete a branch of a repository|owner,repo,branch
list_branches|List the branches of a repository|owner,repo
get_file_contents|Get the contents of a file or directory in a repository|owner,repo,path,ref
create_or_update_file|Create or update a single file in a repository with a commit|owner,repo,path,content,message,branch
search_code|Search code across GitHub repositories|query
search_repositories|Search GitHub repositories by name, topic or language|query
fork_repository|Fork a repository to your account or an organization|owner,repo,organization
create_release|Create a release for a tag with release notes|owner,repo,tag_name,name,body
list_workflow_runs|List the GitHub Actions workflow runs of a repository|owner,repo,workflow_id,status
rerun_workflow|Re-run a failed GitHub Actions workflow run|owner,repo,run_id
""",
    "jira": """
create_issue|Create a Jira issue (story, bug, task) in a project|project_key,summary,description,issue_type
get_issue|Get a Jira issue by key with its fields|issue_key
search_issues|Search Jira issues with a JQL query|jql,max_results
update_issue|Update the fields of a Jira issue|issue_key,fields
transition_issue|Move a Jira issue to another status in its workflow (to do, in progress, done)|issue_key,transition
assign_issue|Assign a Jira issue to a user|issue_key,assignee
add_comment|Add a comment to a Jira issue|issue_key,body
list_projects|List the Jira projects you can see|query
get_project|Get a Jira project with its components and versions|project_key
create_sprint|Create a sprint on a Jira board|board_id,name,start_date,end_date
start_sprint|Start a planned sprint|sprint_id
close_sprint|Complete an active sprint|sprint_id
move_issues_to_sprint|Move issues into a sprint|sprint_id,issue_keys
get_board|Get a Jira agile board|board_id
list_boards|List Jira agile boards|project_key
link_issues|Link two Jira issues (blocks, relates to, duplicates)|inward_issue,outward_issue,link_type
add_worklog|Log time spent on a Jira issue|issue_key,time_spent,comment
get_worklogs|Get the time logged on a Jira issue|issue_key
add_attachment|Attach a file to a Jira issue|issue_key,file_path
create_version|Create a release version in a Jira project|project_key,name,release_date
release_version|Mark a Jira version as released|version_id
add_watcher|Add a watcher to a Jira issue|issue_key,user
delete_issue|Delete a Jira issue|issue_key
get_transitions|List the transitions available for a Jira issue|issue_key
create_epic|Create an epic in a Jira project|project_key,summary,description
""",
    "slack": """
send_message|Send a message to a Slack channel|channel,text
reply_in_thread|Reply to a message in its thread|channel,thread_ts,text
list_channels|List the public channels of the Slack workspace|limit
create_channel|Create a Slack channel|name,is_private
archive_channel|Archive a Slack channel|channel
invite_to_channel|Invite users to a Slack channel|channel,users
get_channel_history|Get the recent messages of a channel|channel,limit
search_messages|Search Slack messages|query,count
add_reaction|Add an emoji reaction to a message|channel,timestamp,emoji
pin_message|Pin a message in a channel|channel,timestamp
get_user_profile|Get a Slack user's profile|user_id
list_users|List the members of the Slack workspace|limit
set_status|Set your Slack status text and emoji|status_text,status_emoji
upload_file|Upload a file to Slack channels|channels,file_path,title
schedule_message|Schedule a message to be sent later to a channel|channel,text,post_at
delete_message|Delete a message you sent|channel,timestamp
update_message|Edit a message you sent|channel,timestamp,text
set_channel_topic|Set the topic of a channel|channel,topic
open_direct_message|Open a direct message conversation with users|users
send_direct_message|Send a direct message to a user|user_id,text
create_reminder|Create a Slack reminder|text,time
list_reminders|List your Slack reminders|limit
join_channel|Join a public Slack channel|channel
leave_channel|Leave a Slack channel|channel
get_permalink|Get a permanent link to a message|channel,timestamp
""",
    "fs": """
read_file|Read the complete contents of a file|path
read_multiple_files|Read several files at once|paths
write_file|Create a new file or overwrite an existing file with content|path,content
edit_file|Make line-based edits to a text file and return a diff|path,edits,dry_run
append_file|Append text to the end of a file|path,content
create_directory|Create a directory, with its parents|path
list_directory|List the files and directories in a directory|path
directory_tree|Get a recursive tree of a directory as JSON|path
move_file|Move or rename a file or directory|source,destination
copy_file|Copy a file to another path|source,destination
delete_file|Delete a file|path
search_files|Search for files whose names match a pattern, recursively|path,pattern,exclude_patterns
grep_files|Search the contents of files for a regular expression|path,pattern
get_file_info|Get the size, times and permissions of a file|path
list_allowed_directories|List the directories this server may access|
file_checksum|Compute the SHA-256 checksum of a file|path,algorithm
compress_directory|Compress a directory into a zip archive|path,archive
extract_archive|Extract a zip or tar archive|archive,destination
change_permissions|Change the permissions (mode) of a file|path,mode
watch_directory|Report the changes in a directory since a given time|path,since
read_file_lines|Read a range of lines of a file|path,start,end
head_file|Read the first lines of a file|path,lines
tail_file|Read the last lines of a file|path,lines
disk_usage|Report the disk usage of a directory|path
find_duplicates|Find duplicate files in a directory by content|path
""",
    "db": """
query|Run a read-only SQL query and return the rows|sql,params
execute|Execute a SQL statement that changes data (insert, update, delete)|sql,params
list_tables|List the tables of the database|schema
describe_table|Describe a table's columns, types and keys|table
list_schemas|List the schemas of the database|
create_table|Create a table from a column definition|table,columns
drop_table|Drop a table|table
create_index|Create an index on columns of a table|table,columns,unique
list_indexes|List the indexes of a table|table
explain_query|Show the query plan of a SQL query|sql
export_csv|Export the result of a query to a CSV file|sql,path
import_csv|Import a CSV file into a table|table,path
backup_database|Back up the database to a file|path
restore_database|Restore the database from a backup file|path
list_connections|List the open connections to the database server|
kill_connection|Terminate a database connection|pid
table_row_count|Count the rows of a table|table
vacuum|Reclaim storage and update planner statistics|table
list_views|List the views of the database|schema
create_view|Create a view from a query|name,sql
list_users|List the database users and roles|
grant_privilege|Grant a privilege on a table to a role|role,privilege,table
begin_transaction|Begin a transaction|isolation_level
commit_transaction|Commit the current transaction|
rollback_transaction|Roll back the current transaction|
""",
    "calendar": """
list_events|List the events of a calendar between two dates|calendar_id,time_min,time_max
create_event|Create a calendar event with attendees|calendar_id,summary,start,end,attendees
update_event|Change the time, title or attendees of an event|calendar_id,event_id,summary,start,end
delete_event|Delete a calendar event|calendar_id,event_id
get_event|Get a calendar event|calendar_id,event_id
find_free_time|Find free time slots shared by attendees|attendees,time_min,time_max,duration
list_calendars|List your calendars|
create_calendar|Create a new calendar|summary,time_zone
respond_to_invitation|Accept, decline or tentatively accept a meeting invitation|calendar_id,event_id,response
add_attendee|Add an attendee to an event|calendar_id,event_id,email
remove_attendee|Remove an attendee from an event|calendar_id,event_id,email
set_reminder|Set a reminder before an event|calendar_id,event_id,minutes
create_recurring_event|Create a repeating event (daily, weekly, monthly)|calendar_id,summary,start,end,recurrence
get_time_zone|Get the time zone of a calendar|calendar_id
set_out_of_office|Set an out-of-office period that declines meetings|start,end,message
list_meeting_rooms|List the bookable meeting rooms|building
book_meeting_room|Book a meeting room for an event|room_id,event_id
share_calendar|Share a calendar with someone|calendar_id,email,role
quick_add_event|Create an event from a sentence like 'Lunch with Ann tomorrow at noon'|calendar_id,text
move_event|Move an event to another calendar|calendar_id,event_id,destination
list_attendees|List the attendees of an event and their responses|calendar_id,event_id
get_free_busy|Get the busy times of calendars|calendar_ids,time_min,time_max
create_video_link|Add a video conference link to an event|calendar_id,event_id
export_ics|Export a calendar as an ICS file|calendar_id,path
import_ics|Import events from an ICS file|calendar_id,path
""",
    "email": """
send_email|Send an email to recipients|to,subject,body,cc
reply_email|Reply to an email|message_id,body,reply_all
forward_email|Forward an email to other recipients|message_id,to,note
search_emails|Search the mailbox|query,max_results
read_email|Read an email with its headers and body|message_id
list_inbox|List the recent messages of the inbox|max_results
create_draft|Create a draft email|to,subject,body
send_draft|Send a draft|draft_id
delete_email|Move an email to the trash|message_id
archive_email|Archive an email out of the inbox|message_id
mark_read|Mark emails as read|message_ids
mark_unread|Mark emails as unread|message_ids
add_label|Add a label to emails|message_ids,label
remove_label|Remove a label from emails|message_ids,label
create_label|Create a mailbox label|name
list_labels|List the mailbox labels|
download_attachment|Download an attachment of an email|message_id,attachment_id,path
create_filter|Create a filter that labels or archives matching incoming mail|criteria,action
list_filters|List the mailbox filters|
set_vacation_responder|Turn on an automatic vacation reply|subject,body,start,end
get_thread|Get all the messages of an email thread|thread_id
block_sender|Block a sender's emails|email
unsubscribe|Unsubscribe from a mailing list|message_id
star_email|Star an email|message_id
count_unread|Count the unread emails of a label|label
""",
    "k8s": """
list_pods|List the pods in a Kubernetes namespace|namespace,label_selector
get_pod|Get a pod's status and containers|namespace,name
delete_pod|Delete a pod (its controller starts a new one)|namespace,name
get_pod_logs|Get the logs of a pod's container|namespace,name,container,tail_lines
exec_in_pod|Run a command in a pod's container|namespace,name,command
list_deployments|List the deployments in a namespace|namespace
scale_deployment|Scale a deployment to a number of replicas|namespace,name,replicas
restart_deployment|Restart the pods of a deployment (rolling restart)|namespace,name
rollout_status|Get the rollout status of a deployment|namespace,name
rollback_deployment|Roll a deployment back to its previous revision|namespace,name
apply_manifest|Apply a YAML manifest to the cluster|manifest
delete_resource|Delete a Kubernetes resource by kind and name|kind,namespace,name
list_services|List the services in a namespace|namespace
port_forward|Forward a local port to a pod|namespace,name,local_port,remote_port
list_namespaces|List the namespaces of the cluster|
create_namespace|Create a namespace|name
list_nodes|List the cluster's nodes with their status|
cordon_node|Mark a node unschedulable|name
drain_node|Evict the pods of a node before maintenance|name
get_events|Get the recent events of a namespace|namespace
list_configmaps|List the config maps of a namespace|namespace
get_secret|Get a secret's keys (values hidden)|namespace,name
top_pods|Show the CPU and memory use of pods|namespace
describe_resource|Describe a resource as kubectl describe does|kind,namespace,name
list_contexts|List the kubeconfig contexts|
""",
    "billing": """
create_customer|Create a billing customer with an email|email,name
get_customer|Get a billing customer|customer_id
list_customers|List billing customers|email,limit
create_invoice|Create an invoice for a customer|customer_id,items,due_date
send_invoice|Send an invoice to the customer by email|invoice_id
void_invoice|Void an open invoice|invoice_id
list_invoices|List the invoices of a customer|customer_id,status
create_payment_link|Create a payment link for a product|price_id,quantity
refund_payment|Refund a payment, fully or partly|payment_id,amount,reason
list_payments|List recent payments|customer_id,limit
create_subscription|Subscribe a customer to a price|customer_id,price_id
cancel_subscription|Cancel a customer's subscription|subscription_id,at_period_end
update_subscription|Change the plan or quantity of a subscription|subscription_id,price_id,quantity
list_subscriptions|List subscriptions|customer_id,status
create_product|Create a product in the catalogue|name,description
create_price|Create a price for a product|product_id,unit_amount,currency,interval
create_coupon|Create a discount coupon|percent_off,duration
apply_coupon|Apply a coupon to a customer|customer_id,coupon_id
get_balance|Get the account balance|
list_payouts|List the payouts to the bank account|limit
create_payout|Pay out the balance to the bank account|amount,currency
list_disputes|List payment disputes (chargebacks)|status
respond_dispute|Submit evidence for a dispute|dispute_id,evidence
get_tax_rates|List the tax rates|country
update_customer_card|Update a customer's default payment card|customer_id,payment_method_id
""",
}

# task text | a short second query | the right tool
_TASKS = """
Open a bug report in acme/web saying the login button does nothing|github create issue|github_create_issue
Merge pull request 42 in acme/web with a squash|merge pull request|github_merge_pull_request
Show me what changed in PR 17 of acme/api|pull request diff|github_get_pull_request_diff
Ask alice and bob to review pull request 8|request reviewers pull request|github_request_reviewers
Make a new branch feature/login off main in acme/web|github create branch|github_create_branch
Read the README.md of the acme/web repository on GitHub|github get file contents|github_get_file_contents
Re-run the CI workflow run 9911 that failed in acme/api|rerun workflow run|github_rerun_workflow
Publish release v2.0.0 of acme/api with notes|github create release|github_create_release
Find where parse_config is defined across our GitHub code|search code|github_search_code
Comment 'fixed in 1.2' on GitHub issue 55|github add issue comment|github_add_issue_comment
File a Jira bug in project WEB: checkout page crashes|jira create issue|jira_create_issue
Move WEB-123 to In Progress|jira transition issue status|jira_transition_issue
Give WEB-77 to maria|jira assign issue|jira_assign_issue
Find all open Jira bugs assigned to me with JQL|jira search issues jql|jira_search_issues
Log 3 hours of work on WEB-12|jira add worklog time|jira_add_worklog
Mark WEB-9 as blocking WEB-10|jira link issues|jira_link_issues
Start sprint 31 on the board|jira start sprint|jira_start_sprint
Put WEB-1 and WEB-2 into sprint 31|move issues to sprint|jira_move_issues_to_sprint
Mark version 4.1 as released in Jira|jira release version|jira_release_version
Create an epic 'Payments revamp' in project PAY|jira create epic|jira_create_epic
Post 'deploy done' in the #releases Slack channel|slack send message|slack_send_message
Reply in the thread of that Slack message with 'on it'|slack reply thread|slack_reply_in_thread
Make a private Slack channel called incident-42|slack create channel|slack_create_channel
Add a thumbs-up emoji reaction to the message|slack add reaction emoji|slack_add_reaction
Set my Slack status to 'in a meeting'|slack set status|slack_set_status
Send the weekly report at 9am Monday to #team, not now|slack schedule message|slack_schedule_message
Look through Slack for messages mentioning the outage|slack search messages|slack_search_messages
DM Carol that the build is green|slack send direct message|slack_send_direct_message
Change the #general topic to 'Q3 planning'|slack set channel topic|slack_set_channel_topic
Show the contents of notes/todo.txt|read file|fs_read_file
Rename draft.md to final.md|move rename file|fs_move_file
Find every file named *.log under /var/app|search files pattern|fs_search_files
Find the lines containing TODO in the src folder|grep files contents|fs_grep_files
Show the last 50 lines of server.log|tail file lines|fs_tail_file
Zip up the build folder into build.zip|compress directory zip|fs_compress_directory
How big is the data directory on disk?|disk usage directory|fs_disk_usage
Make a folder reports/2026 with its parents|create directory|fs_create_directory
How many customers rows are there in the customers table?|table row count|db_table_row_count
Show the columns and types of the orders table|describe table columns|db_describe_table
Why is this SQL query slow? Show its plan|explain query plan|db_explain_query
Dump the result of SELECT * FROM sales to sales.csv|export csv query|db_export_csv
Add an index on orders(customer_id)|create index table|db_create_index
Undo the current database transaction|rollback transaction|db_rollback_transaction
Schedule a meeting with Ann and Li tomorrow 10-11|calendar create event|calendar_create_event
When are Ann, Li and I all free next week for an hour?|find free time attendees|calendar_find_free_time
Decline the invitation to the Friday retro|respond to invitation decline|calendar_respond_to_invitation
Set a weekly standup every Monday at 9|create recurring event weekly|calendar_create_recurring_event
Book room Everest for the design review|book meeting room|calendar_book_meeting_room
I am on holiday 1-14 August; decline meetings then|set out of office|calendar_set_out_of_office
Email the Q3 report to finance@acme.com|send email|email_send_email
Forward the invoice email to accounting|forward email|email_forward_email
Save the PDF attached to that email to disk|download attachment email|email_download_attachment
Turn on an automatic away reply while I am on leave|vacation responder|email_set_vacation_responder
Automatically archive all mail from newsletters@shop.com|create mail filter|email_create_filter
Show me the logs of the api-7f9 pod|pod logs|k8s_get_pod_logs
Run 5 replicas of the web deployment|scale deployment replicas|k8s_scale_deployment
The last deploy of checkout broke; go back to the previous version|rollback deployment|k8s_rollback_deployment
Prepare node-3 for maintenance by evicting its pods|drain node|k8s_drain_node
Which pods use the most CPU in prod?|top pods cpu memory|k8s_top_pods
Give the customer back the $20 they paid for order 881|refund payment|billing_refund_payment
Stop Acme Corp's subscription at the end of the period|cancel subscription|billing_cancel_subscription
Bill customer cus_12 for 10 hours of consulting|create invoice customer|billing_create_invoice
Give customer cus_9 a 20% discount|apply coupon discount|billing_apply_coupon
Answer the chargeback on payment py_55 with our evidence|respond dispute evidence|billing_respond_dispute
"""
TASKS: list[tuple[str, str, str]] = [
    (task, query, right)
    for task, query, right in (line.split("|") for line in _TASKS.strip().splitlines())
]


def suite_tools() -> list[Tool]:
    """The 225 tools (``Tool.from_schema``; none of them runs)."""
    made = []
    for family, block in FAMILIES.items():
        for line in block.strip().splitlines():
            name, description, params = line.split("|")
            names = [p for p in params.split(",") if p]
            schema: dict[str, Any] = {
                "type": "object",
                "properties": {
                    p: {"type": "string", "description": f"The {p.replace('_', ' ')}"}
                    for p in names
                },
                "required": names[:1],
                "additionalProperties": False,
            }
            made.append(Tool.from_schema(f"{family}_{name}", description, schema, _never))
    return made


def _never(**arguments: Any) -> Any:
    raise RuntimeError("the suite's tools are data; none runs")
