# How jobs run: ${train_cmd} / ${decode_cmd} / ${cuda_cmd} JOB=1:N <log> <command>  (see `launch --help`).
# local: parallel processes on this machine; slurm: sbatch arrays (edit the resources for your cluster:
# train_cmd / cuda_cmd run the SAD net training, decode_cmd feature extraction, decoding and scoring).
# cuda_cmd is for jobs on GPUs: run.sh adds `--gpu N` (--ngpu for training, 1 for --gpu_inference true), which
# the slurm backend turns into --gres=gpu:N and the local backend ignores (the job sees this machine's GPUs).
cmd_setup --train "--mem 16G --time 24:00:00" --cuda "--mem 32G --time 24:00:00" --decode "--mem 4G --time 4:00:00"
