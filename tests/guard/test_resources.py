"""Deletes of remote and cloud resources (guard/resources.py): each tool's destructive verbs and
their safe look-alikes, the statements database shells are handed, and the table's upkeep."""

from __future__ import annotations

import subprocess
import sys

import pytest

from dshkit.guard import DESTRUCTIVE, SAFE, UNKNOWN, classify
from dshkit.guard.commands import RESOURCE_TOOLS
from dshkit.guard.resources import (
    CLIENTS,
    NAMES,
    TOOLS,
    mongo_destructive,
    redis_destructive,
    sql_destructive,
)

WORK = "/home/dev/proj"
HOME = "/home/dev"
D, S, U = DESTRUCTIVE, SAFE, UNKNOWN

# (command, risk) in bash, run in WORK with the home HOME.
KUBERNETES = [
    ("kubectl delete pod web-0", D),
    ("kubectl delete ns staging", D),
    ("kubectl delete namespace prod --wait=false", D),
    ("kubectl delete deployment --all", D),
    ("kubectl delete pvc data-db-0 -n prod", D),
    ("kubectl -n prod delete svc api", D),
    ("kubectl --context prod-eu delete -f k8s/", D),
    ("kubectl delete pods -l app=web --grace-period=0 --force", D),
    ("kubectl drain node-3 --ignore-daemonsets --delete-emptydir-data", D),
    ("kubectl replace --force -f deploy.yaml", D),
    ("kubectl apply --prune -l app=web -f k8s/", D),
    ("kubectl delete pod x --dry-run=none", D),  # none: it runs for real
    ("sudo kubectl delete ns x", D),
    ("oc delete project demo", D),
    ("oc adm drain node-1", D),
    ("/usr/local/bin/kubectl delete pod x", D),
    ("helm uninstall api -n prod", D),
    ("helm delete api", D),
    ("helm --kube-context prod uninstall web", D),
    ("helmfile destroy", D),
    ("kubectl get pods -A", S),
    ("kubectl describe pod web-0", S),
    ("kubectl logs -f web-0", S),
    ("kubectl apply -f k8s/", S),
    ("kubectl diff -f k8s/", S),
    ("kubectl rollout restart deployment/web", S),
    # scaling to zero keeps every object and volume: scaling back up restores it
    ("kubectl scale deployment web --replicas=0", S),
    ("kubectl delete pod x --dry-run=client", S),
    ("kubectl delete ns x --dry-run=server -o yaml", S),
    ("kubectl delete --help", S),
    ("kubectl get pods -o name | grep delete", S),
    ("kubectl config delete-context old", S),  # a kubeconfig entry, not the cluster's
    ("helm list -A", S),
    ("helm install web ./chart", S),
    ("helm upgrade --install web ./chart", S),
    ("helm uninstall web --dry-run", S),
    ("helm plugin uninstall diff", S),
    ("helm rollback web 3", S),
]

INFRASTRUCTURE = [
    ("terraform destroy", D),
    ("terraform destroy -auto-approve", D),
    ("terraform -chdir=infra destroy -target aws_instance.web", D),
    ("terraform apply -destroy -auto-approve", D),
    ("terraform apply --destroy", D),
    ("terraform state rm aws_s3_bucket.logs", D),
    ("terraform workspace delete staging", D),
    ("tofu destroy", D),
    ("tofu apply -auto-approve -destroy", D),
    ("terragrunt destroy", D),
    ("terragrunt run-all destroy", D),
    ("terragrunt run --all destroy", D),
    ("terragrunt run-all apply -destroy", D),
    ("pulumi destroy --yes", D),
    ("pulumi destroy -s prod -y", D),
    ("pulumi stack rm dev --force", D),
    ("pulumi state delete urn:pulumi:dev::x", D),
    ("terraform plan", S),
    ("terraform plan -destroy", S),  # a plan only
    ("terraform plan -destroy -out=destroy.tfplan", S),
    ("terraform apply", S),
    ("terraform apply -auto-approve", S),
    ("terraform init -upgrade", S),
    ("terraform state list", S),
    ("terraform state show aws_instance.web", S),
    ("terraform workspace select staging", S),
    ("terraform taint aws_instance.web", S),
    ("terraform destroy -help", S),
    ("tofu plan", S),
    ("terragrunt plan", S),
    ("pulumi up --yes", S),
    ("pulumi preview", S),
    ("pulumi destroy --preview-only", S),
    ("pulumi stack ls", S),
]

CLOUD = [
    ("aws s3 rm s3://bucket/key.txt", D),
    ("aws s3 rm s3://bucket --recursive", D),
    ("aws s3 rb s3://bucket --force", D),
    ("aws --profile prod s3 rm s3://logs/2024/ --recursive", D),
    ("aws s3 sync ./dist s3://site --delete", D),
    ("aws s3api delete-bucket --bucket b", D),
    ("aws s3api delete-objects --bucket b --delete file://keys.json", D),
    ("aws ec2 terminate-instances --instance-ids i-0abc", D),
    ("aws --region eu-west-1 ec2 delete-vpc --vpc-id vpc-1", D),
    ("aws rds delete-db-instance --db-instance-identifier prod --skip-final-snapshot", D),
    ("aws rds delete-db-cluster --db-cluster-identifier c", D),
    ("aws cloudformation delete-stack --stack-name app", D),
    ("aws dynamodb delete-table --table-name users", D),
    ("aws lambda delete-function --function-name f", D),
    ("aws ecr batch-delete-image --repository-name r --image-ids imageTag=v1", D),
    ("aws iam remove-role-from-instance-profile --role-name r --instance-profile-name p", D),
    ("aws ec2 deregister-image --image-id ami-1", D),
    ("aws sqs purge-queue --queue-url https://sqs/q", D),
    ("aws kms schedule-key-deletion --key-id k", D),
    ("aws secretsmanager delete-secret --secret-id s --force-delete-without-recovery", D),
    ("aws s3 sync s3://backup . --delete", D),  # deletes below the whole workspace
    ("aws s3 sync s3://backup /var/www --delete", D),
    ("gcloud projects delete my-project", D),
    ("gcloud compute instances delete vm-1 --zone us-central1-a --quiet", D),
    ("gcloud --project p sql instances delete db", D),
    ("gcloud container clusters delete c1 --region us-east1", D),
    ("gcloud storage rm -r gs://bucket", D),
    ("gcloud storage buckets delete gs://bucket", D),
    ("gcloud alpha storage rm gs://b/x", D),
    ("gcloud run services delete api", D),
    ("gcloud storage rsync ./d gs://b --delete-unmatched-destination-objects -r", D),
    ("gsutil rm gs://bucket/obj", D),
    ("gsutil -m rm -r gs://bucket", D),
    ("gsutil rb gs://bucket", D),
    ("gsutil -m rsync -d -r ./site gs://site", D),
    ("gsutil rsync -rd ./site gs://site", D),
    ("az group delete -n rg-prod --yes", D),
    ("az vm delete -g rg -n vm1 --yes", D),
    ("az storage blob delete-batch -s container --account-name acct", D),
    ("az storage account delete -n acct -g rg", D),
    ("az keyvault purge --name kv", D),
    ("az aks delete -n cluster -g rg", D),
    ("az deployment group create -g rg --template-file t.json --mode Complete", D),
    ("az storage blob sync -c site -s ./dist --delete-destination true", D),
    ("azcopy rm https://acct.blob.core.windows.net/c/x --recursive", D),
    ("azcopy sync ./dist https://acct.blob.core.windows.net/c --delete-destination=true", D),
    ("doctl compute droplet delete web-1 --force", D),
    ("doctl databases delete db-id", D),
    ("fly apps destroy my-app --yes", D),
    ("flyctl destroy my-app", D),
    ("fly volumes destroy vol_123", D),
    ("fly machine rm 1234 --force", D),
    ("heroku apps:destroy --app my-app --confirm my-app", D),
    ("heroku pg:reset DATABASE_URL --confirm my-app", D),
    ("heroku addons:destroy heroku-postgresql -a app", D),
    ("vercel remove my-deploy --yes", D),
    ("netlify sites:delete site-id", D),
    ("firebase firestore:delete --all-collections", D),
    ("gh repo delete owner/repo --yes", D),
    ("gh release delete v1.0 -y", D),
    ("gh api -X DELETE repos/o/r", D),
    ("gh api --method=DELETE repos/o/r/git/refs/heads/x", D),
    ("glab repo delete group/proj", D),
    ("rclone purge remote:bucket", D),
    ("rclone delete remote:bucket/dir", D),
    ("rclone sync ./dist remote:site", D),
    ("s3cmd del s3://b/x", D),
    ("s3cmd sync ./d s3://b --delete-removed", D),
    ("mc rb --force local/bucket", D),
    ("mc rm --recursive --force local/bucket/dir", D),
    ("mc mirror --remove ./dist local/site", D),
    ("restic forget --keep-last 1 --prune", D),
    ("borg delete /backups::archive", D),
    ("bq rm -r -f dataset", D),
    ("bq query --use_legacy_sql=false 'DELETE FROM ds.events'", D),
    ("aws s3 ls s3://bucket", S),
    ("aws s3 cp ./a.txt s3://bucket/a.txt", S),
    ("aws s3 cp s3://bucket/a.txt .", S),
    ("aws s3 sync ./dist s3://site", S),
    ("aws s3 sync s3://backup ./restore --delete", S),  # deletes inside the workspace
    ("aws s3 rm s3://bucket/x --dryrun", S),
    ("aws ec2 describe-instances --filters Name=tag:env,Values=delete-me", S),
    ("aws ec2 terminate-instances --instance-ids i-1 --dry-run", S),
    ("aws sts get-caller-identity", S),
    ("aws --profile delete-me s3 ls", S),
    ("aws rds create-db-snapshot --db-instance-identifier prod", S),
    ("aws help", S),
    ("gcloud compute instances list", S),
    ("gcloud config set project p", S),
    ("gcloud compute instances create vm-1", S),
    ("gcloud compute instances delete --help", S),
    ("gcloud storage ls gs://bucket", S),
    ("gsutil ls gs://bucket", S),
    ("gsutil cp a gs://b/a", S),
    ("gsutil rsync -r ./site gs://site", S),
    ("gsutil -m rsync -n -d -r ./site gs://site", S),
    ("az group list -o table", S),
    ("az vm create -g rg -n vm1 --image Ubuntu2204", S),
    ("az deployment group create -g rg --template-file t.json", S),
    ("az storage blob sync -c site -s ./dist", S),
    ("azcopy copy ./a https://acct.blob.core.windows.net/c/a", S),
    ("azcopy sync ./dist https://acct.blob.core.windows.net/c", S),
    ("doctl compute droplet list", S),
    ("fly deploy", S),
    ("fly status -a app", S),
    ("heroku logs --tail -a app", S),
    ("heroku apps:info -a app", S),
    ("vercel deploy --prod", S),
    ("gh pr list", S),
    ("gh repo view owner/repo", S),
    ("gh api repos/o/r", S),
    ("rclone copy ./d remote:bucket", S),
    ("rclone ls remote:bucket", S),
    ("rclone sync remote:bucket ./mirror", S),
    ("rclone sync ./dist remote:site --dry-run", S),
    ("restic snapshots", S),
    ("restic forget --keep-last 3 --dry-run", S),
    ("bq ls dataset", S),
    ("bq query 'SELECT COUNT(*) FROM ds.events'", S),
]

CONTAINERS = [
    ("docker system prune", D),
    ("docker system prune -af --volumes", D),
    ("docker volume rm pgdata", D),
    ("docker volume prune -f", D),
    ("docker image prune -a", D),
    ("docker image prune --all --force", D),
    ("docker container prune -f", D),
    ("docker network prune", D),
    ("docker rm -f web", D),
    ("docker rm --force $(docker ps -aq)", D),
    ("docker rm -fv db", D),
    ("docker rm -v db", D),
    ("docker container rm -f web", D),
    ("docker rmi -f app:latest", D),
    ("docker image rm --force app:1", D),
    ("docker compose down -v", D),
    ("docker compose down --volumes --remove-orphans", D),
    ("docker compose -f docker-compose.prod.yml down -v", D),
    ("docker compose -p shop down -v", D),
    ("docker-compose down -v", D),
    ("docker-compose -f a.yml down --volumes", D),
    ("docker stack rm prod", D),
    ("docker --context prod service rm api", D),
    ("podman system prune -a", D),
    ("podman system reset --force", D),
    ("podman volume rm data", D),
    ("podman rm -f web", D),
    ("podman pod rm -f pod1", D),
    ("nerdctl rm -f web", D),
    ("docker ps -a", S),
    ("docker images", S),
    ("docker run --rm -it ubuntu bash", S),
    ("docker run --rm alpine rm -rf /tmp/x", S),  # inside a throwaway container
    ("docker build -t app .", S),
    ("docker logs -f web", S),
    # a stopped container's removal: its data lives in volumes, which `docker rm` keeps;
    # images are rebuilt or pulled again
    ("docker rm web", S),
    ("docker rmi app:old", S),
    ("docker image prune", S),  # only dangling images
    ("docker image prune -f", S),
    ("docker builder prune -f", S),  # the build cache, rebuilt at will
    ("docker stop web", S),
    ("docker compose down", S),
    ("docker compose up -d --build", S),
    ("docker compose -f docker-compose.yml logs -f", S),
    ("docker-compose down --remove-orphans", S),
    ("docker volume ls", S),
    ("docker network rm frontend", S),
    ("podman ps", S),
    ("docker exec web ls /app", S),
    # a running container keeps its state: its places are not the workspace (as kubectl exec)
    ("docker exec -it web rm -rf /var/cache", D),
    ("docker run --rm -v /srv:/srv alpine rm -rf /srv/data", D),  # a mount is the host's
]

DATABASES = [
    ("psql -c 'DROP TABLE users'", D),
    ("psql -d app -c 'drop database app'", D),
    ('psql "postgres://u@h/db" -c "TRUNCATE events"', D),
    ("psql -U postgres --command='DROP SCHEMA public CASCADE'", D),
    ("psql -c 'DELETE FROM users'", D),
    ("psql -c 'delete from users;'", D),
    ("psql -c 'DELETE FROM users WHERE 1=1'", D),
    ("psql -c 'DELETE FROM users WHERE true'", D),
    ("psql -c 'UPDATE users SET admin = true'", D),
    ("psql -c 'SELECT 1; DROP TABLE x'", D),
    ("psql -c 'ALTER TABLE users DROP COLUMN email'", D),
    ("psql -c 'DROP INDEX idx_users_email'", D),
    ("PGPASSWORD=x psql -h db -U app -c 'TRUNCATE TABLE sessions'", D),
    ("psql -c 'WITH old AS (SELECT id FROM t) DELETE FROM t'", D),
    ("psql <<EOF\nBEGIN;\nDELETE FROM orders;\nCOMMIT;\nEOF", D),
    ("psql app <<'SQL'\nDROP TABLE IF EXISTS legacy;\nSQL", D),
    ('echo "DROP DATABASE app;" | psql', D),
    ("printf 'TRUNCATE t;' | psql -d app", D),
    ("mysql -u root -p -e 'DROP DATABASE shop'", D),
    ('mysql -uroot -psecret shop --execute="TRUNCATE orders"', D),
    ("mysql -e 'DELETE FROM shop.orders'", D),
    ('mysql -e"DROP TABLE t"', D),
    ("mariadb -e 'UPDATE accounts SET balance = 0'", D),
    ("mysql shop <<EOF\nDROP TABLE carts;\nEOF", D),
    ("sqlite3 app.db 'DROP TABLE users'", D),
    ('sqlite3 app.db "DELETE FROM sessions"', D),
    ("sqlite3 -cmd 'DROP TABLE t' app.db", D),
    ("sqlite3 app.db <<EOF\nDELETE FROM t;\nEOF", D),
    ("duckdb data.duckdb -c 'DROP TABLE events'", D),
    ("redis-cli FLUSHALL", D),
    ("redis-cli -h cache -p 6380 flushall", D),
    ("redis-cli -n 2 FLUSHDB ASYNC", D),
    ("echo FLUSHALL | redis-cli", D),
    ("valkey-cli flushdb", D),
    ('mongosh --eval "db.dropDatabase()"', D),
    ("mongosh app --eval 'db.users.drop()'", D),
    ("mongosh --quiet --eval 'db.users.deleteMany({})'", D),
    ("mongo app --eval 'db.sessions.remove({})'", D),
    ("mongosh --eval 'db.users.updateMany({}, {$set: {active: false}})'", D),
    ("mongosh <<EOF\nuse app\ndb.dropDatabase()\nEOF", D),
    ("cqlsh -e 'DROP KEYSPACE app'", D),
    ("clickhouse-client --query 'TRUNCATE TABLE logs'", D),
    ("sqlcmd -S db -Q 'DROP DATABASE Shop'", D),
    ("snowsql -q 'DROP WAREHOUSE wh'", D),
    ("docker exec -it db psql -U postgres -c 'DROP DATABASE app'", D),
    ("docker exec -i db psql -U app < /dev/null -c 'TRUNCATE t'", D),
    ("docker compose exec db psql -c 'DELETE FROM users'", D),
    ("docker-compose exec -T db mysql -e 'DROP DATABASE x'", D),
    ("kubectl exec -it pg-0 -- psql -c 'TRUNCATE events'", D),
    ("kubectl exec -n cache redis-0 -- redis-cli FLUSHALL", D),
    ("dropdb app", D),
    ("dropdb -h db -U postgres app_test", D),
    ("dropuser alice", D),
    ("mysqladmin -u root -p drop shop", D),
    ("pg_restore --clean -d app dump.pgdump", D),
    ("pg_restore -c -d app dump.pgdump", D),
    ("mongorestore --drop dump/", D),
    ("psql -c 'SELECT 1'", S),
    ("psql -d app -c 'SELECT * FROM users LIMIT 5'", S),
    ("psql -c 'DELETE FROM users WHERE id = 1'", S),
    ("psql -c 'UPDATE users SET name = $$x$$ WHERE id = 2'", S),
    ("psql -c \"SELECT 'DROP TABLE x'\"", S),  # a string, not a statement
    ("psql -c 'SELECT 1 -- DROP TABLE x'", S),  # a comment
    ("psql -c 'SELECT 1 /* TRUNCATE t */'", S),
    ("psql -c 'INSERT INTO t VALUES (1) ON CONFLICT (id) DO UPDATE SET n = 2'", S),
    ("psql -c 'SELECT * FROM t FOR UPDATE'", S),
    ("psql -c 'ALTER TABLE t DROP CONSTRAINT t_fk'", S),
    ("psql -c 'ALTER TABLE t ALTER COLUMN c DROP NOT NULL'", S),
    ("psql -c 'CREATE TABLE dropped_items (id int)'", S),
    ("psql -c 'SELECT * FROM deleted_users'", S),
    ('psql -c "DELETE FROM t WHERE id = $ID"', S),  # a value known when it runs
    ("psql -c '\\dt'", S),
    ("psql app", S),
    ("psql -l", S),
    ("pg_dump app > app.sql", S),
    ("mysql -e 'SHOW DATABASES'", S),
    ("mysql -u root -p shop -e 'DELETE FROM carts WHERE expired = 1'", S),
    ("mysql shop <<EOF\nSELECT COUNT(*) FROM orders;\nEOF", S),
    ("sqlite3 app.db .tables", S),
    ("sqlite3 app.db 'SELECT count(*) FROM users'", S),
    ("sqlite3 app.db", S),
    ("redis-cli GET session:1", S),
    ("redis-cli DEL session:1", S),  # one key
    ("redis-cli KEYS 'flushall*'", S),
    ("redis-cli -h cache INFO", S),
    ("mongosh --eval 'db.users.find({})'", S),
    ("mongosh --eval 'db.users.deleteMany({age: {$lt: 0}})'", S),
    ("mongosh --eval 'db.users.deleteOne({_id: 1})'", S),
    ("cqlsh -e 'SELECT * FROM app.users LIMIT 1'", S),
    ("pg_restore -d app dump.pgdump", S),
    ("mongorestore dump/", S),
    ("mysqladmin -u root -p status", S),
    ("docker exec -it db psql -U postgres -c 'SELECT 1'", S),
    ("kubectl exec -it pg-0 -- psql -c 'SELECT now()'", S),
    ('echo "SELECT 1" | psql', S),
    # what cannot be seen: a script file, a variable, another command's output
    ("psql -f migrations/001.sql", U),
    ("psql --file=seed.sql app", U),
    ("mongosh app cleanup.js", U),
    ('psql -c "$SQL"', U),
    ("cat dump.sql | psql app", U),
    ('sqlite3 app.db "$QUERY"', U),
]

CASES = KUBERNETES + INFRASTRUCTURE + CLOUD + CONTAINERS + DATABASES


@pytest.mark.parametrize(("command", "risk"), CASES)
def test_each_command_is_judged(command: str, risk: str) -> None:
    found = classify(command, "bash", WORK, home=HOME)
    assert found.risk == risk, found.reason


# (command, risk) in PowerShell: the same tools, the same table
PWSH = [
    ("kubectl delete ns staging", D),
    ("aws s3 rm s3://bucket/key", D),
    ("terraform destroy -auto-approve", D),
    ("az group delete --name rg --yes", D),
    ("docker system prune -a -f", D),
    ('psql -c "DROP TABLE users"', D),
    ("Kubectl.exe delete pod x", D),
    ("kubectl get pods", S),
    ("terraform plan", S),
    ("az group list", S),
    ('psql -c "SELECT 1"', S),
]


@pytest.mark.parametrize(("command", "risk"), PWSH)
def test_powershell_reads_the_same_table(command: str, risk: str) -> None:
    found = classify(command, "pwsh", "C:\\Users\\dev\\proj", home="C:\\Users\\dev")
    assert found.risk == risk, found.reason


@pytest.mark.parametrize(
    ("command", "named"),
    [
        ("kubectl -n prod delete ns x", "kubectl delete"),
        (
            "aws --profile p ec2 terminate-instances --instance-ids i-1",
            "aws ec2 terminate-instances",
        ),
        ("gcloud compute instances delete vm", "gcloud compute instances delete"),
        ("docker compose -f prod.yml down -v", "docker compose down"),
        ("aws s3 sync . s3://site --delete", "below s3://site"),
        ("psql -c 'DROP TABLE users'", "psql: DROP TABLE"),
        ("psql -c 'DELETE FROM t'", "DELETE without WHERE"),
        ("docker exec db mysql -e 'TRUNCATE t'", "mysql: TRUNCATE"),
        ("redis-cli flushdb", "FLUSHDB"),
        ("psql -f x.sql", "x.sql"),
    ],
)
def test_the_reason_names_the_tool_and_what_it_deletes(command: str, named: str) -> None:
    assert named in classify(command, "bash", WORK, home=HOME).reason


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("drop table x", "DROP TABLE"),
        ("SELECT 1;\n-- a note\nTRUNCATE t;", "TRUNCATE"),
        (
            "UPDATE t SET a = (SELECT b FROM u WHERE u.id = t.id)",
            "UPDATE without WHERE (every row)",
        ),
        ("DELETE FROM t WHERE 'a'='a'", "DELETE … WHERE 'a' = 'a' (every row)"),
        ("DELETE FROM t WHERE id IN (SELECT id FROM u)", None),
        ("SELECT 'x''; DROP TABLE t; --'", None),  # one string, a doubled quote inside
        ("SELECT $tag$ DROP TABLE t $tag$", None),
        ('SELECT "drop" FROM t', None),
        ("", None),
    ],
)
def test_the_sql_reader(text: str, found: str | None) -> None:
    assert sql_destructive(text) == found


def test_the_redis_and_mongo_readers() -> None:
    assert redis_destructive("SET a 1\nflushall") == "FLUSHALL empties the database"
    assert redis_destructive("GET flushall") is None
    assert mongo_destructive("db.c.dropIndexes()") == "dropIndexes()"
    assert mongo_destructive("db.c.deleteMany( { } )") == "deleteMany({}) of every document"
    assert mongo_destructive("db.c.deleteMany({a: 1})") is None


def test_the_dispatch_table_names_every_tool_of_the_table() -> None:
    # commands.py lists the names so that resources.py is imported only when one is met
    assert RESOURCE_TOOLS == NAMES == frozenset(TOOLS) | frozenset(CLIENTS)


def test_every_row_is_read_and_every_verb_path_is_well_formed() -> None:
    from dshkit.guard.resources import Client, Tool

    for name, row in TOOLS.items():
        tool = Tool(row)
        assert tool.verbs, name
        for verb in tool.verbs:
            assert verb.kind in ("", "sync", "exec", "sql", "unknown", "every"), name
            assert "" not in verb.path, name
    for name, client_row in CLIENTS.items():
        assert Client(client_row).language in ("sql", "redis", "mongo", "transfer"), name


@pytest.mark.process
def test_the_table_is_imported_only_when_one_of_its_tools_is_met() -> None:
    probe = (
        "import sys\n"
        "from dshkit.guard import classify\n"
        "classify('ls -la src && git status && npm test', 'bash', '/w')\n"
        "before = 'dshkit.guard.resources' in sys.modules\n"
        "classify('kubectl get pods', 'bash', '/w')\n"
        "print(before, 'dshkit.guard.resources' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, check=True)
    assert done.stdout.split() == [b"False", b"True"]


# Statements read from a file, a here-document through cat, and commands run in a container.
FED_AND_CONTAINERS = [
    ("psql < dump.sql", U),
    ("mysql db < drop.sql", U),
    ("psql -h db mydb < /tmp/x.sql", U),
    ("< drop.sql mysql app", U),
    ("sudo -u postgres psql app < migrate.sql", U),
    ("sqlite3 app.db < schema.sql", U),
    ("docker exec -i db psql < drop.sql", U),
    ("cat dump.sql | psql app", U),  # cat's file is not read here
    ("psql app <<EOF\nDROP TABLE users;\nEOF", D),
    ("cat <<EOF | psql -d app\nDROP TABLE users;\nEOF", D),
    ("cat - <<'SQL' | mysql app\nTRUNCATE orders;\nSQL", D),
    ("cat <<EOF | psql -d app\nSELECT count(*) FROM users;\nEOF", S),
    ("docker exec db sh -c 'rm -rf /var/lib/postgresql'", D),
    ("podman exec -u root db rm -rf /var/lib/mysql", D),
    ("docker compose exec web sh -c 'rm -rf /app/uploads'", D),
    ("docker-compose exec -T db psql -c 'DROP TABLE x'", D),
    ("docker container exec db redis-cli FLUSHALL", D),
    ("kubectl exec web-1 -- rm -rf /", D),
    ("kubectl exec -it web-1 -n prod -- sh -c 'rm -rf /data'", D),
    ("docker exec web cat /etc/hosts", S),
    ("docker exec -it web bash", S),  # a shell to type in: nothing said yet
    ("docker run --rm -v $PWD:/app -w /app node:22 npm test", S),
    ("docker run --rm alpine echo hi", S),
    # a file fed to a shell or an interpreter is a script of one's own, as `bash x.sh`
    ("bash < scripts/setup.sh", S),
    ("python3 < tools/gen.py", S),
    ("ssh host < deploy.sh", U),  # run elsewhere: not read here (as cat deploy.sh | ssh host)
    ("rm < list.txt", S),  # rm reads no names from its input
]


@pytest.mark.parametrize(("command", "risk"), FED_AND_CONTAINERS)
def test_fed_statements_and_container_commands(command: str, risk: str) -> None:
    found = classify(command, "bash", WORK, home=HOME)
    assert found.risk == risk, (command, found.reason)


def test_a_file_fed_to_a_database_client_is_named() -> None:
    found = classify("mysql app < drop.sql", "bash", WORK, home=HOME)
    assert found.reason == "mysql runs the statements in drop.sql, not read here"
    assert found.decision("autonomous") == "allow"  # seen, the project's own file
    inside = classify("docker exec db sh -c 'rm -rf /var/lib/postgresql'", "bash", WORK, home=HOME)
    assert inside.reason.startswith("docker exec db: rm: recursive delete of /var/lib/postgresql")
